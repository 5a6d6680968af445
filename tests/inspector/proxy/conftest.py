"""The ``proxied`` fixture: the HTTP relay in front of an upstream handler, recording."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest
from aiohttp import web

from mcpeek.inspector.proxy import http_fast
from mcpeek.inspector.proxy.guard import RequestGuard
from mcpeek.inspector.proxy.http import HttpRelay
from tests.inspector.proxy.http_harness import Handler, Proxied, listen


@pytest.fixture
async def proxied(aiohttp_server):  # type: ignore[no-untyped-def]
    started: list[tuple[HttpRelay, web.BaseRunner]] = []

    async def start(
        handler: Handler,
        *,
        relay_options: dict[str, object] | None = None,
        upstream_options: dict[str, object] | None = None,
        server_options: dict[str, float] | None = None,
        fast_lane: bool = True,
        **options: object,
    ) -> Proxied:
        upstream_app = web.Application(client_max_size=64 * 1024 * 1024)
        upstream_app.router.add_route("*", "/{tail:.*}", handler)
        upstream = await aiohttp_server(upstream_app, **(upstream_options or {}))
        holder = Proxied("", upstream)
        guard = RequestGuard(0, **options)  # type: ignore[arg-type]
        relay = HttpRelay(
            str(upstream.make_url("/mcp")), holder.records.extend, guard, **(relay_options or {})
        )
        relay.fast_lane = fast_lane
        await relay.__aenter__()
        runner, port = await listen(relay, **(server_options or {}))
        guard.port = port
        holder.url = f"http://127.0.0.1:{port}"
        relay.public_origin = holder.url
        holder.relay, holder.runner = relay, runner
        started.append((relay, runner))
        return holder

    yield start
    for relay, runner in started:
        await runner.cleanup()
        await relay.__aexit__()


@pytest.fixture
def fast_count(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many exchanges the fast lane served (one list item, counted up)."""
    served = [0]
    serve = http_fast.serve

    async def counted(*args: object) -> None:
        served[0] += 1
        await serve(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(http_fast, "serve", counted)
    return served


@pytest.fixture
def no_errors_logged(caplog: pytest.LogCaptureFixture) -> Iterator[None]:
    """No error (a callback's traceback: asyncio logs them) while the test runs."""
    with caplog.at_level(logging.ERROR):
        yield
    logged = caplog.get_records("call")  # (caplog.records: the teardown's, here)
    assert [r.getMessage() for r in logged if r.levelno >= logging.ERROR] == []
