"""Driving the HTTP relay in tests: its listener on a free port, in front of a test upstream."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field

from aiohttp import web
from aiohttp.test_utils import TestServer

from mcpeek.inspector.proxy.guard import RequestGuard
from mcpeek.inspector.proxy.http import HttpRelay
from mcpeek.inspector.records import Http, Msg, SeqRecord, wire_bytes

RPC = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "x"}}
RESULT = {"jsonrpc": "2.0", "id": 1, "result": {"resultType": "complete", "content": []}}

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@dataclass
class Proxied:
    url: str  # the proxy's origin
    upstream: TestServer
    records: list[SeqRecord] = field(default_factory=list)
    relay: HttpRelay | None = None  # (set once listening)
    runner: web.BaseRunner | None = None  # its listener, to stop as mcpeek does

    def msgs(self, direction: str | None = None) -> list[bytes]:
        return [
            wire_bytes(r)
            for r in self.records
            if isinstance(r, Msg) and (direction is None or r.dir == direction)
        ]

    def http(self, phase: str) -> list[Http]:
        return [r for r in self.records if isinstance(r, Http) and r.phase == phase]


async def listen(relay: HttpRelay, **options: float) -> tuple[web.BaseRunner, int]:
    """The relay's own listener on a free loopback port (cleanup: ``runner.cleanup()``)."""
    runner = web.ServerRunner(relay.server(**options))
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    return runner, runner.addresses[0][1]


@contextlib.asynccontextmanager
async def relaying(upstream: str) -> AsyncIterator[tuple[list[SeqRecord], str]]:
    """An ``HttpRelay`` to ``upstream`` listening on loopback: its records and its URL."""
    records: list[SeqRecord] = []
    guard = RequestGuard(0)
    async with HttpRelay(upstream, records.extend, guard) as relay:
        runner, guard.port = await listen(relay)
        try:
            yield records, f"http://127.0.0.1:{guard.port}/mcp"
        finally:
            await runner.cleanup()
