"""Spans out through the SDK's OTLP exporters: sent to a receiver, or as OTLP JSON.

``send`` hands the spans and histograms to the OTLP/HTTP (protobuf) or
OTLP/gRPC exporter of the SDK. ``otlp_json`` has the SDK's own OTLP encoder
(``opentelemetry.exporter.otlp.proto.common``) build the export requests and
protobuf's JSON mapping print them, with the two changes the OTLP JSON
encoding makes to that mapping: trace and span ids as hex, not Base64, and
enums as integers. The result is what the collector's file exporter writes
and its ``otlpjsonfile`` receiver reads: one export request per line,
traces first, then metrics. Import only after
:func:`~mcpeek.inspector.export.endpoint.require_otel`.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Sequence
from typing import Any

from google.protobuf import json_format
from opentelemetry.exporter.otlp.proto.common.metrics_encoder import encode_metrics
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.metrics.export import (
    InMemoryMetricReader,
    MetricExporter,
    PeriodicExportingMetricReader,
)
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor, SpanExporter
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from mcpeek.inspector.export.endpoint import Endpoint
from mcpeek.inspector.export.otel import LastReason, Telemetry, Watched
from mcpeek.inspector.export.spandata import SpanData

ID_FIELDS = frozenset({"traceId", "spanId", "parentSpanId"})
#: Metrics are sent when the export ends (a capture) or this often (live), in ms.
METRIC_INTERVAL_MS = 10_000


def span_exporter(endpoint: Endpoint, timeout: float) -> SpanExporter:
    if endpoint.protocol == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import (
            OTLPSpanExporter as GrpcSpans,
        )

        return GrpcSpans(
            endpoint=endpoint.signal_url("traces"), insecure=not endpoint.secure, timeout=timeout
        )
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    return OTLPSpanExporter(endpoint=endpoint.signal_url("traces"), timeout=timeout)


def metric_exporter(endpoint: Endpoint, timeout: float) -> MetricExporter:
    if endpoint.protocol == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import (
            OTLPMetricExporter as GrpcMetrics,
        )

        return GrpcMetrics(
            endpoint=endpoint.signal_url("metrics"), insecure=not endpoint.secure, timeout=timeout
        )
    from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter

    return OTLPMetricExporter(endpoint=endpoint.signal_url("metrics"), timeout=timeout)


class Sender:
    """Spans and histograms on their way to ``endpoint``, in batches, in the SDK's
    background threads; ``failing`` hears each failed batch's reason."""

    def __init__(
        self,
        endpoint: Endpoint,
        timeout: float,
        failing: Callable[[str], None],
        send_delay_ms: int = 5000,
    ) -> None:
        """``send_delay_ms``: how long the batch processor waits before sending what it has."""
        self.reasons = LastReason()
        self.spans = Watched(span_exporter(endpoint, timeout), failing, self.reasons)
        reader = PeriodicExportingMetricReader(
            metric_exporter(endpoint, timeout), export_interval_millis=METRIC_INTERVAL_MS
        )
        processor = BatchSpanProcessor(self.spans, schedule_delay_millis=send_delay_ms)
        self.telemetry = Telemetry(processor, reader)

    def emit(self, spans: Sequence[SpanData]) -> None:
        self.telemetry.emit(spans)

    def close(self) -> None:
        """Send what is left and stop (the SDK bounds each try by the timeout); after a
        batch that failed, what is left is counted as not sent, not tried."""
        self.spans.give_up = self.spans.last_failed
        try:
            self.telemetry.close_spans()
            # A receiver that just refused the spans would only hold the exit again.
            if not self.spans.last_failed:
                self.telemetry.close_metrics()
        finally:
            self.reasons.close()


def otlp_json(spans: Sequence[SpanData]) -> str:
    """The OTLP JSON lines of ``spans``: their traces request, then the histograms'."""
    finished = InMemorySpanExporter()
    metrics = InMemoryMetricReader()
    quiet = LastReason()
    try:
        telemetry = Telemetry(SimpleSpanProcessor(finished), metrics)
        telemetry.emit(spans)
        lines = [_json(encode_spans(finished.get_finished_spans()))]
        data = metrics.get_metrics_data()
        if data is not None and data.resource_metrics:
            lines.append(_json(encode_metrics(data)))
        telemetry.shutdown()
    finally:
        quiet.close()
    return "".join(line + "\n" for line in lines)


def _json(message: Any) -> str:
    as_dict = json_format.MessageToDict(message, use_integers_for_enums=True)
    return json.dumps(_hex_ids(as_dict), separators=(",", ":"), ensure_ascii=False)


def _hex_ids(value: Any) -> Any:
    """protobuf's JSON mapping gives bytes as Base64; OTLP JSON wants ids in hex."""
    if isinstance(value, dict):
        return {
            key: base64.b64decode(item).hex()
            if key in ID_FIELDS and isinstance(item, str)
            else _hex_ids(item)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [_hex_ids(item) for item in value]
    return value
