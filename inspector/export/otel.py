"""Spans and histograms through the OpenTelemetry SDK (the optional ``otel`` extra).

:class:`Telemetry` replays :class:`~mcpeek.inspector.export.spandata.SpanData`
through the SDK's own tracer (with the capture's times, and ids given by
:class:`PlannedIds`) and records each request's duration in the two MCP
histograms; the SDK's processors and OTLP exporters do the rest, so the bytes
sent or written are the SDK's, not an encoder of ours. Import this module
only after :func:`require_otel`.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from typing import Any

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import MetricReader
from opentelemetry.sdk.metrics.view import ExplicitBucketHistogramAggregation, View
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, SpanLimits, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.sdk.trace.id_generator import IdGenerator
from opentelemetry.trace import NonRecordingSpan, SpanContext, SpanKind, TraceFlags, TraceState
from opentelemetry.trace.status import Status, StatusCode

from mcpeek.inspector import __version__
from mcpeek.inspector.export import semconv as sc
from mcpeek.inspector.export.spandata import SpanData

# The cause inside an exporter's log line: an OS error, a gRPC status, an HTTP status.
_ERRNO = re.compile(r"\[Errno -?\d+\] [^\"'),]+|StatusCode\.[A-Z_]+|status[ _]code:? \d+")
#: Events a span keeps (progress notifications of a long call can be many).
MAX_EVENTS = 1024


class PlannedIds(IdGenerator):
    """Gives the SDK the ids mcpeek derived from the capture for the next span."""

    def __init__(self) -> None:
        self.trace_id = 0
        self.span_id = 0

    def generate_trace_id(self) -> int:
        return self.trace_id

    def generate_span_id(self) -> int:
        return self.span_id


class Telemetry:
    """One export: a tracer provider on ``processor`` and, with ``metric_reader``,
    a meter provider for the histograms. :meth:`shutdown` flushes both."""

    def __init__(self, processor: SpanProcessor, metric_reader: MetricReader | None) -> None:
        resource = Resource.create(
            {"service.name": "mcpeek", "service.version": __version__}, schema_url=sc.SCHEMA_URL
        )
        self._ids = PlannedIds()
        self._tracer_provider = TracerProvider(
            resource=resource,
            id_generator=self._ids,
            span_limits=SpanLimits(max_events=MAX_EVENTS),
            shutdown_on_exit=False,  # shutdown() decides what is still sent
        )
        self._tracer_provider.add_span_processor(processor)
        self._tracer = self._tracer_provider.get_tracer(
            "mcpeek", __version__, schema_url=sc.SCHEMA_URL
        )
        self._meter_provider: MeterProvider | None = None
        self._histograms: list[Any] = []
        if metric_reader is not None:
            buckets = ExplicitBucketHistogramAggregation(list(sc.DURATION_BUCKETS))
            self._meter_provider = MeterProvider(
                metric_readers=[metric_reader],
                resource=resource,
                shutdown_on_exit=False,
                views=[
                    View(instrument_name=name, aggregation=buckets)
                    for name in (sc.CLIENT_DURATION, sc.SERVER_DURATION)
                ],
            )
            meter = self._meter_provider.get_meter("mcpeek", __version__, sc.SCHEMA_URL)
            # mcpeek stands between the two peers, so one measurement stands for both
            # views: the sender's (client) and the receiver's (server) operation.
            self._histograms = [
                meter.create_histogram(
                    sc.CLIENT_DURATION, unit="s", description="MCP request duration, as relayed"
                ),
                meter.create_histogram(
                    sc.SERVER_DURATION, unit="s", description="MCP request duration, as relayed"
                ),
            ]

    def emit(self, spans: Sequence[SpanData]) -> None:
        for data in spans:
            self._emit(data)

    def _emit(self, data: SpanData) -> None:
        self._ids.trace_id, self._ids.span_id = data.trace_id, data.span_id
        context = Context()  # a root: nothing of this process's own context
        if data.parent_id is not None:
            parent = SpanContext(
                data.trace_id,
                data.parent_id,
                is_remote=data.remote_parent,
                trace_flags=TraceFlags(TraceFlags.SAMPLED),
                # An invalid tracestate is dropped (with a warning the handler keeps quiet).
                trace_state=TraceState.from_header([data.trace_state])
                if data.trace_state
                else None,
            )
            context = trace.set_span_in_context(NonRecordingSpan(parent), context)
        span = self._tracer.start_span(
            data.name,
            context=context,
            kind=SpanKind.CLIENT,
            attributes=data.attributes,
            start_time=data.start_ns,
        )
        for event in data.events:
            span.add_event(event.name, event.attributes, timestamp=event.time_ns)
        if data.error is not None:
            span.set_status(Status(StatusCode.ERROR, data.error))
        span.end(end_time=max(data.end_ns, data.start_ns))
        if data.measured and self._histograms:
            seconds = max(data.end_ns - data.start_ns, 0) / 1e9
            kept = {k: data.attributes[k] for k in sc.METRIC_ATTRIBUTES if k in data.attributes}
            for histogram in self._histograms:
                histogram.record(seconds, kept)

    def flush(self) -> None:
        self._tracer_provider.force_flush()

    def shutdown(self) -> None:
        self.close_spans()
        self.close_metrics()

    def close_spans(self) -> None:
        """Send the spans left and stop the tracer."""
        self._tracer_provider.shutdown()

    def close_metrics(self) -> None:
        """Send the histograms and stop the meter."""
        if self._meter_provider is not None:
            self._meter_provider.shutdown()


class Watched(SpanExporter):
    """A span exporter that tells ``failing`` (once per run of failures) when a batch
    could not be sent, with the exporter's last logged reason."""

    def __init__(
        self, inner: SpanExporter, failing: Callable[[str], None], reasons: LastReason
    ) -> None:
        self._inner = inner
        self._failing = failing
        self._reasons = reasons
        self.failed = 0
        self.sent = 0
        self.last_failed = False
        # Set when the export ends after a failure: what is left is not tried (a dead
        # receiver would hold the proxy's exit for another timeout), only counted.
        self.give_up = False

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        if self.give_up:
            self.failed += len(spans)
            return SpanExportResult.FAILURE
        try:
            result = self._inner.export(spans)
        except Exception as exc:  # an exporter's bug must not end the export's thread
            self._reasons.last = f"{type(exc).__name__}: {exc}"
            result = SpanExportResult.FAILURE
        self.last_failed = result is not SpanExportResult.SUCCESS
        if result is SpanExportResult.SUCCESS:
            self.sent += len(spans)
            return result
        self.failed += len(spans)
        self._failing(self._reasons.reason())
        return result

    def shutdown(self) -> None:
        self._inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self._inner.force_flush(timeout_millis)


class LastReason(logging.Handler):
    """Keeps the last error the OpenTelemetry exporters logged, and keeps their
    log lines (and tracebacks) off mcpeek's stderr: mcpeek says it in one line.
    The cause of a failed try (``[Errno 111] Connection refused``) is kept apart
    from the exporters' closing words ("Failed to export … due to timeout")."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.last: str | None = None
        self.cause: str | None = None
        self._logger = logging.getLogger("opentelemetry")
        self._logger.addHandler(self)
        self._logger.propagate = False

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage()
        self.last = text.splitlines()[0][:300] if text else text
        errno = _ERRNO.search(text)
        if errno is not None:
            self.cause = errno.group(0)
        elif text.startswith("Transient error"):
            self.cause = text.splitlines()[0][:300]

    def reason(self) -> str:
        return self.cause or self.last or "the endpoint did not accept the spans"

    def close(self) -> None:
        self._logger.removeHandler(self)
        super().close()
