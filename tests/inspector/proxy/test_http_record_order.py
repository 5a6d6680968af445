"""The HTTP relay records a request (and so redacts its copy) after forwarding it."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from mcpeek.inspector.proxy.guard import RequestGuard
from mcpeek.inspector.proxy.http import HttpRelay
from mcpeek.inspector.proxy.http_record import ResponseRecorder
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


def _batches() -> tuple[list[list[str]], Any]:
    """Each emitted batch as its records' kinds (``response``, ``msg``, ``end``)."""
    batches: list[list[str]] = []

    def emit(records: Sequence[SeqRecord]) -> None:
        batches.append(
            [r.phase if isinstance(r, Http) else type(r).__name__.lower() for r in records]
        )

    return batches, emit


def test_a_held_response_record_goes_out_first_with_the_body_s_records() -> None:
    batches, emit = _batches()
    response = Http(x="x1", phase="response", status=200)
    body = ResponseRecorder(emit, "x1", False, True, None, [response])
    body.feed(b'{"jsonrpc":"2.0","id":1,"result":{}}', last=True)
    body.finish("complete")
    assert batches == [["response", "msg", "end"]]


def test_sse_records_go_out_as_they_come_but_the_last_chunk_s_with_the_end() -> None:
    batches, emit = _batches()
    response = Http(x="x1", phase="response", status=200)
    body = ResponseRecorder(emit, "x1", True, False, None, [response])
    body.feed(b'data: {"jsonrpc":"2.0","method":"a"}\n\n')
    assert batches == [["response", "msg"]]  # not held: more may take long to come
    body.feed(b'data: {"jsonrpc":"2.0","method":"b"}\n\n', last=True)
    assert batches == [["response", "msg"]]
    body.finish("complete")
    assert batches == [["response", "msg"], ["msg", "end"]]


@pytest.mark.parametrize("last", [False, True])
def test_a_body_that_does_not_decode_is_noted_in_its_place(last: bool) -> None:
    batches, emit = _batches()
    response = Http(x="x1", phase="response", status=200)
    body = ResponseRecorder(emit, "x1", True, False, "gzip", [response])
    body.feed(b"not gzip at all", last=last)
    body.finish("complete")
    kinds = [kind for batch in batches for kind in batch]
    assert kinds == ["response", "event", "end"]


async def test_a_streamed_response_is_recorded_before_its_body_is_waited_for(
    proxied: Any,
) -> None:
    release = asyncio.Event()

    async def upstream(request: web.Request) -> web.StreamResponse:
        await request.read()
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        await response.write(b": no event yet\n\n")  # nothing to record but the head
        await release.wait()
        await response.write(b'data: {"jsonrpc":"2.0","id":1,"result":{}}\n\n')
        return response

    p = await proxied(upstream)
    async with aiohttp.ClientSession() as client:
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"})
        headers = {"Content-Type": "application/json"}
        async with client.post(f"{p.url}/mcp", data=body, headers=headers) as response:
            await response.content.readuntil(b"\n\n")  # the comment: the rest waits
            assert [r.status for r in p.http("response")] == [200]
            release.set()
            await response.read()
