"""``mcpeek export FILE --format otlp``: a capture's spans and histograms at a real receiver,
over OTLP/HTTP (the aiohttp receiver) and over OTLP/gRPC (a grpcio server with the
collector's service from opentelemetry-proto)."""

from __future__ import annotations

import json
import subprocess
import threading
from collections.abc import Iterator
from concurrent import futures
from contextlib import contextmanager

import grpc
from opentelemetry.proto.collector.metrics.v1 import (
    metrics_service_pb2,
    metrics_service_pb2_grpc,
)
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from tests.conftest import mcpeek_argv
from tests.inspector.export.conftest import CAPTURES
from tests.inspector.export.receiver import otlp_receiver

CAPTURE = CAPTURES / "modern-http-sse.jsonl"


def expected_names() -> list[str]:
    """The span names otlp-json gives for the capture: the two ways must agree."""
    done = subprocess.run(
        mcpeek_argv("export", str(CAPTURE), "--format", "otlp-json"),
        capture_output=True,
        text=True,
        timeout=120,
    )
    traces = json.loads(done.stdout.splitlines()[0])
    return sorted(
        span["name"]
        for r in traces["resourceSpans"]
        for s in r["scopeSpans"]
        for span in s["spans"]
    )


def send(url: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        mcpeek_argv("export", str(CAPTURE), "--format", "otlp", "--endpoint", url),
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_over_http() -> None:
    with otlp_receiver() as receiver:
        done = send(receiver.url)
        assert done.returncode == 0, done.stderr
        # The command returns once the SDK has sent everything: nothing to wait for.
        assert sorted(s.name for s in receiver.spans) == expected_names()
        assert receiver.metric_names() == {
            "mcp.client.operation.duration",
            "mcp.server.operation.duration",
        }
        assert receiver.resources[0]["service.name"] == "mcpeek"
    assert done.stderr == f"mcpeek: {len(expected_names())} spans sent to {receiver.url}\n"


class _Collector(
    trace_service_pb2_grpc.TraceServiceServicer, metrics_service_pb2_grpc.MetricsServiceServicer
):
    def __init__(self) -> None:
        self.spans: list[Span] = []
        self.metrics: list[str] = []
        self._lock = threading.Lock()

    def Export(self, request, context):  # type: ignore[no-untyped-def]
        with self._lock:
            if isinstance(request, trace_service_pb2.ExportTraceServiceRequest):
                for resource in request.resource_spans:
                    for scope in resource.scope_spans:
                        self.spans.extend(scope.spans)
                return trace_service_pb2.ExportTraceServiceResponse()
            for resource in request.resource_metrics:
                for scope in resource.scope_metrics:
                    self.metrics.extend(m.name for m in scope.metrics)
            return metrics_service_pb2.ExportMetricsServiceResponse()


@contextmanager
def grpc_collector() -> Iterator[tuple[_Collector, int]]:
    collector = _Collector()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    trace_service_pb2_grpc.add_TraceServiceServicer_to_server(collector, server)
    metrics_service_pb2_grpc.add_MetricsServiceServicer_to_server(collector, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        yield collector, port
    finally:
        server.stop(grace=None)


def test_over_grpc() -> None:
    with grpc_collector() as (collector, port):
        done = send(f"grpc://127.0.0.1:{port}")
        assert done.returncode == 0, done.stderr
        assert sorted(s.name for s in collector.spans) == expected_names()
        assert set(collector.metrics) == {
            "mcp.client.operation.duration",
            "mcp.server.operation.duration",
        }
