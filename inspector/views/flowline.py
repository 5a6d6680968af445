"""One flow as one line of text or one JSON object (``mcpeek show``, ``--log flows``).

12:01:02.345  → tools/call get_weather  id 3  ← complete  12.3 ms  [2 progress]
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TextIO

import msgspec

from mcpeek.inspector.analysis import AnalysisListener, Conversation, Entry, Flow
from mcpeek.inspector.jsonrpc import NO_ID, MessageDecoder
from mcpeek.inspector.records import Act, Record, wire_bytes


class FlowJson(msgspec.Struct, omit_defaults=False):
    flow: int
    method: str | None
    name: str | None
    ids: list[Any]
    status: str
    latency_ms: float | None
    msgs: list[int]
    chain: list[Any]
    era: str | None
    conversation: str
    progress: int
    late: bool


class SlowJson(FlowJson):
    """A request still in flight past ``--slow``: its flow so far, and for how long."""

    pending_ms: float


def flow_json(flow: Flow) -> FlowJson:
    latency = flow.latency_ms
    return FlowJson(
        flow=flow.number,
        method=flow.method,
        name=flow.name,
        ids=flow.ids,
        status=flow.status,
        latency_ms=None if latency is None else round(latency, 3),
        msgs=flow.msgs,
        chain=flow.chain,
        era=flow.era,
        conversation=flow.conversation,
        progress=flow.progress_count,
        late=flow.late,
    )


def clock(t: float) -> str:
    try:
        local = time.localtime(t)
    except (OverflowError, OSError, ValueError):  # a capture's t is data, not a promise
        return f"t={t!r}"
    return time.strftime("%H:%M:%S", local) + f".{int((t % 1) * 1000):03d}"


def _ids(flow: Flow) -> str:
    ids = flow.ids
    if not ids:
        return ""
    shown = "→".join(
        msgspec.json.encode(i).decode() if not isinstance(i, int) else str(i) for i in ids
    )
    return f"id{'s' if len(ids) > 1 else ''} {shown}"


#: Characters of a line that is not JSON-RPC shown in its place: enough to tell a
#: log line ("Starting server on port…") from a torn message, short enough for a row.
SHOWN_TEXT = 80


def unreadable_text(entry: Entry) -> str:
    """The start of a message that is not JSON-RPC, quoted, control characters escaped."""
    record = entry.record
    # Cut before decoding: a 100 MB line must cost no more than its first characters.
    if record.raw is not None:
        text = record.raw[: SHOWN_TEXT + 1]
    else:
        text = wire_bytes(record)[: SHOWN_TEXT * 4].decode("utf-8", "replace")
    shown = text[:SHOWN_TEXT] + ("…" if len(text) > SHOWN_TEXT else "")
    return msgspec.json.encode(shown.encode("utf-8", "replace").decode()).decode()


def made_by_mcpeek(flow: Flow) -> str:
    """How mcpeek changed the flow's messages (``edit``, ``reply``…), or ``""``."""
    made = {e.record.made for e in flow.entries if e.record.made is not None}
    return ", ".join(sorted(made | flow.made_trimmed))


def flow_text(flow: Flow) -> str:
    arrow = "→" if flow.sender == "c2s" else "←"
    what = flow.method or "(no method)"
    if flow.orphan is not None and flow.orphan.kind == "invalid":
        what = unreadable_text(flow.orphan)
    head = f"{clock(flow.started)}  {arrow} {what}"
    if flow.name:
        head += f" {flow.name}"
    parts = [head]
    ids = _ids(flow)
    if ids:
        parts.append(ids)
    if flow.status in ("notification", "orphan"):
        parts.append(f"({flow.status})")
    else:
        status = flow.status + (" (late)" if flow.late else "")
        back = "←" if flow.sender == "c2s" else "→"
        parts.append(f"{back} {status}")
        if flow.latency_ms is not None:
            parts.append(f"{flow.latency_ms:.1f} ms")
    extras = []
    if flow.progress_count:
        extras.append(f"{flow.progress_count} progress")
    others = flow.notification_count - flow.progress_count
    if others:
        extras.append(f"{others} notification{'s' if others != 1 else ''}")
    if len(flow.attempts) > 1:
        extras.append(f"{len(flow.attempts)} rounds")
    made = made_by_mcpeek(flow)
    if made:
        extras.append(f"mcpeek: {made}")
    if extras:
        parts.append("[" + ", ".join(extras) + "]")
    return "  ".join(parts)


def act_text(record: Act) -> str:
    """One line for what mcpeek did to a message: ``12:01:02.345  ⚡ drop → tools/call id 3 …``."""
    message = MessageDecoder().decode(wire_bytes(record))
    arrow = "→" if record.dir == "c2s" else "←"
    what = message.method or message.kind
    ident = "" if message.id is NO_ID else f" id {msgspec.json.encode(message.id).decode()}"
    delay = f" {record.ms:g} ms" if record.ms is not None else ""
    return (
        f"{clock(record.t)}  ⚡ {record.action}{delay} {arrow} {what}{ident}  "
        f"({record.by}: {record.rule})"
    )


#: The statuses a flow is printed with; a message added to such a flow came after its line.
ENDED = frozenset(
    {
        "complete",
        "tool-error",
        "error",
        "cancelled",
        "unanswered",
        "closed",
        "by-proxy",
        "undecoded",
    }
)


class FlowPrinter(AnalysisListener):
    """Writes one line per ended flow (text or JSON) to ``out``.

    A notification that joins a flow after its line was written (progress that a
    server keeps sending after a cancellation, say) prints the flow again, with its
    new counts: otherwise a streaming reader would never see it."""

    def __init__(self, out: TextIO | Callable[[str], None], fmt: str = "text") -> None:
        self._write = out if callable(out) else (lambda line: print(line, file=out, flush=True))
        self._json = fmt == "json"
        self._encoder = msgspec.json.Encoder()
        self.count = 0

    def on_message(self, entry: Entry, flow: Flow, conversation: Conversation) -> None:
        # The message that ends a flow (its response, its cancellation) comes before
        # on_flow_end; only a notification that joins an ended flow is late.
        if (
            flow.status in ENDED
            and entry.kind == "notification"
            and flow.notifications
            and flow.notifications[-1] is entry  # just joined (a cancellation does not)
        ):
            self._print(flow, f"  (after its end: {entry.method})")

    def on_flow_end(self, flow: Flow, conversation: Conversation) -> None:
        self.count += 1
        self._print(flow, "")

    def slow(self, flow: Flow, elapsed: float) -> None:
        """``flow``'s request has been in flight ``elapsed`` seconds, past ``--slow``:
        one line now (the flow gets its usual line when it ends)."""
        if self._json:
            so_far = msgspec.structs.asdict(flow_json(flow))
            line = SlowJson(**so_far, pending_ms=round(elapsed * 1000, 3))
            self._write(self._encoder.encode(line).decode())
        else:
            self._write(f"{flow_text(flow)}  (slow: no answer after {elapsed:.1f} s)")

    def on_record(self, record: Record, conversation: Conversation | None) -> None:
        if type(record) is Act:  # what mcpeek did (a fault, a script), as it happened
            if self._json:
                self._write(self._encoder.encode(record).decode())
            else:
                self._write(act_text(record))

    def _print(self, flow: Flow, note: str) -> None:
        if self._json:
            self._write(self._encoder.encode(flow_json(flow)).decode())
        else:
            self._write(flow_text(flow) + note)
