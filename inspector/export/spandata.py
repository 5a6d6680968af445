"""The values a span is made of, and what the spans read from the messages.

:class:`SpanData` is a span as plain values (no OpenTelemetry type), which
:mod:`.spans` builds and :mod:`.otel` replays through the SDK. The readers
here take from a message only what a span needs (a ``traceparent``, an
error's code, a notification's scalar params) and never raise on what the
capture holds.
"""

from __future__ import annotations

import math
from typing import Any

import msgspec

from mcpeek.inspector.analysis import Entry
from mcpeek.inspector.export import semconv as sc

#: Longest string value an event attribute keeps (a log message can be megabytes).
MAX_ATTRIBUTE_TEXT = 1000
ERROR_STATUSES = frozenset({"error", "tool-error", "unanswered", "cancelled"})


class SpanEvent(msgspec.Struct):
    name: str
    time_ns: int
    attributes: dict[str, Any]


class SpanData(msgspec.Struct):
    """One span, as plain values (ids as integers, times in ns since the epoch)."""

    name: str
    trace_id: int
    span_id: int
    start_ns: int
    end_ns: int
    attributes: dict[str, Any]
    events: list[SpanEvent] = msgspec.field(default_factory=list)
    parent_id: int | None = None
    remote_parent: bool = False
    trace_state: str | None = None  # the caller's W3C tracestate, passed on
    error: str | None = None  # the status description when the span failed
    sender: str = "c2s"
    measured: bool = False  # a request's span: its duration goes to the histograms


class Finding(msgspec.Struct):
    """A violation as the engine reports it (only what a span event needs)."""

    rule: str
    severity: str
    msgs: list[int]
    message: str
    spec: str


class _Carrier(msgspec.Struct):
    meta: Any = msgspec.field(default=None, name="_meta")


class JsonRpcError(msgspec.Struct):
    code: Any = None
    message: Any = None


#: OTLP times are unsigned 64-bit nanoseconds since 1970 (up to the year 2554).
OTLP_MAX_NS = (1 << 64) - 1


def time_out_of_range(span: SpanData) -> str | None:
    """Why OTLP cannot carry ``span``'s times (a capture's ``t`` before 1970 or
    centuries ahead), or None: the exporter would fail on it mid-file."""
    times = [span.start_ns, span.end_ns, *(event.time_ns for event in span.events)]
    odd = next((ns for ns in times if not 0 <= ns <= OTLP_MAX_NS), None)
    if odd is None:
        return None
    return (
        f"span {span.name!r} has the time t={odd / 1_000_000_000:g} s, which OTLP cannot carry "
        "(nanoseconds since 1970, up to the year 2554)"
    )


def nanos(t: float) -> int:
    """A capture time (seconds, microsecond resolution) in nanoseconds."""
    scaled = t * 1_000_000
    if not math.isfinite(scaled):  # past 1e302 s: no microseconds, but still a number
        return int(t) * 1_000_000_000  # (that time_out_of_range refuses)
    return round(scaled) * 1000


def error_of(response: Entry) -> JsonRpcError:
    """The ``code`` and ``message`` of an error response (``None`` where they are odd)."""
    try:
        return msgspec.json.decode(response.message().error or b"{}", type=JsonRpcError)
    except msgspec.MsgspecError:
        return JsonRpcError()


class Caller(msgspec.Struct):
    """The W3C trace context a request carried in its ``_meta``."""

    trace_id: int
    span_id: int
    trace_state: str | None = None


def traceparent(request: Entry) -> Caller | None:
    """The caller's trace context in ``params._meta`` (``traceparent``, and its
    ``tracestate`` if a string), or ``None`` without a valid ``traceparent``."""
    params = request.message().params
    if params is None:
        return None
    try:
        carrier = msgspec.json.decode(params, type=_Carrier)
    except msgspec.MsgspecError:
        return None
    meta = carrier.meta
    if not isinstance(meta, dict):
        return None
    ids = sc.parse_traceparent(meta.get("traceparent"))
    if ids is None:
        return None
    state = meta.get("tracestate")
    return Caller(ids[0], ids[1], state if isinstance(state, str) else None)


def notification_event(entry: Entry) -> SpanEvent:
    """A notification of a flow as an event: its method, and the scalar members of its params."""
    attributes: dict[str, Any] = {}
    params = entry.message().params
    try:
        value = msgspec.json.decode(params) if params is not None else None
    except msgspec.MsgspecError:
        value = None
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, bool | int | float) and not (
                isinstance(item, int) and not isinstance(item, bool) and abs(item) >= 2**63
            ):
                attributes[f"mcp.params.{key}"] = item
            elif isinstance(item, str):
                attributes[f"mcp.params.{key}"] = short(item)
    attributes[sc.MCPEEK_SENDER] = entry.dir
    return SpanEvent(entry.method or "(notification)", nanos(entry.t), attributes)


def short(text: str) -> str:
    return text if len(text) <= MAX_ATTRIBUTE_TEXT else text[:MAX_ATTRIBUTE_TEXT] + "…"
