"""A real OTLP/HTTP receiver for the export tests: aiohttp, decoding with opentelemetry-proto.

It runs on its own event loop in a thread (the tests drive processes
synchronously), answers ``POST /v1/traces`` and ``/v1/metrics`` as a collector
does (``application/x-protobuf``, gzip or not) and keeps every decoded span and
metric. ``failing=True`` answers 503 to every export instead.
"""

from __future__ import annotations

import asyncio
import gzip
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from aiohttp import web
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.metrics.v1.metrics_pb2 import Metric
from opentelemetry.proto.trace.v1.trace_pb2 import Span

PROTOBUF = "application/x-protobuf"


class OtlpReceiver:
    def __init__(self, failing: bool = False) -> None:
        self.failing = failing
        self.spans: list[Span] = []
        self.metrics: list[Metric] = []
        self.resources: list[dict[str, str]] = []
        self.requests = 0
        self.url = ""
        self._arrived = threading.Condition()

    async def _traces(self, request: web.Request) -> web.Response:
        body = await self._body(request)
        if self.failing:
            return web.Response(status=503, text="unavailable")
        message = ExportTraceServiceRequest.FromString(body)
        with self._arrived:
            for resource_spans in message.resource_spans:
                self.resources.append(
                    {a.key: a.value.string_value for a in resource_spans.resource.attributes}
                )
                for scope_spans in resource_spans.scope_spans:
                    self.spans.extend(scope_spans.spans)
            self._arrived.notify_all()
        return web.Response(
            body=ExportTraceServiceResponse().SerializeToString(), content_type=PROTOBUF
        )

    async def _metrics(self, request: web.Request) -> web.Response:
        body = await self._body(request)
        if self.failing:
            return web.Response(status=503, text="unavailable")
        message = ExportMetricsServiceRequest.FromString(body)
        with self._arrived:
            for resource_metrics in message.resource_metrics:
                for scope_metrics in resource_metrics.scope_metrics:
                    self.metrics.extend(scope_metrics.metrics)
            self._arrived.notify_all()
        return web.Response(
            body=ExportMetricsServiceResponse().SerializeToString(), content_type=PROTOBUF
        )

    async def _body(self, request: web.Request) -> bytes:
        self.requests += 1
        assert request.content_type == PROTOBUF, request.content_type
        body = await request.read()
        if request.headers.get("content-encoding") == "gzip":
            body = gzip.decompress(body)
        return body

    def wait_until(self, ready: Callable[[OtlpReceiver], bool], timeout: float = 60.0) -> None:
        """Wait until ``ready(self)`` holds, or until ``timeout`` passed (the test's own
        asserts then say what is missing: the wait measures nothing)."""
        with self._arrived:
            self._arrived.wait_for(lambda: ready(self), timeout=timeout)

    def span_names(self) -> set[str]:
        return {span.name for span in self.spans}

    def metric_names(self) -> set[str]:
        return {metric.name for metric in self.metrics}


@contextmanager
def otlp_receiver(failing: bool = False) -> Iterator[OtlpReceiver]:
    receiver = OtlpReceiver(failing)
    loop = asyncio.new_event_loop()
    started = threading.Event()
    app = web.Application()
    app.router.add_post("/v1/traces", receiver._traces)
    app.router.add_post("/v1/metrics", receiver._metrics)
    runner = web.AppRunner(app)

    async def start() -> None:
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        server = site._server
        assert server is not None
        port = server.sockets[0].getsockname()[1]
        receiver.url = f"http://127.0.0.1:{port}"
        started.set()

    def serve() -> None:
        asyncio.set_event_loop(loop)
        loop.run_until_complete(start())
        loop.run_forever()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    assert started.wait(30), "the OTLP receiver did not start"
    try:
        yield receiver
    finally:
        asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(30)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(30)
        loop.close()
