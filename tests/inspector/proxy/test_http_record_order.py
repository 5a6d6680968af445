"""The HTTP relay records a request (and so redacts its copy) after forwarding it."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import aiohttp
from aiohttp import web

from mcpeek.inspector.proxy.guard import RequestGuard
from mcpeek.inspector.proxy.http import HttpRelay
from mcpeek.inspector.records import Http, SeqRecord
from tests.inspector.proxy.http_harness import listen


async def test_the_request_is_recorded_after_it_was_sent_upstream(aiohttp_server) -> None:  # type: ignore[no-untyped-def]
    async def upstream(request: web.Request) -> web.Response:
        return web.json_response({"jsonrpc": "2.0", "id": 1, "result": {}})

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", upstream)
    server = await aiohttp_server(app)
    sent: list[str] = []
    seen_when_recorded: list[list[str]] = []

    def emit(records: Sequence[SeqRecord]) -> None:
        if any(isinstance(r, Http) and r.phase == "request" for r in records):
            seen_when_recorded.append(list(sent))

    guard = RequestGuard(0)
    async with HttpRelay(str(server.make_url("/mcp")), emit, guard) as relay:
        original = relay.upstream_client.request

        def request(method: str, target: str, *args: Any, **kwargs: Any) -> Any:
            sent.append(target)
            return original(method, target, *args, **kwargs)

        relay.upstream_client.request = request  # type: ignore[method-assign]
        runner, guard.port = await listen(relay)
        try:
            async with aiohttp.ClientSession() as client:
                body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"})
                url = f"http://127.0.0.1:{guard.port}/mcp"
                headers = {"Content-Type": "application/json"}
                async with client.post(url, data=body, headers=headers) as response:
                    assert response.status == 200
        finally:
            await runner.cleanup()
    assert seen_when_recorded == [["/mcp"]]
