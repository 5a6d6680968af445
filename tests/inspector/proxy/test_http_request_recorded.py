"""A request is recorded once it has gone to the upstream, not when the answer comes.

A 2026-07-28 server may send its response head only when the call is done. The
relay used to record a small POST body after the upstream's response head: the
request's time was the answer's, a hung call was invisible to ``--slow``, and a
request whose client gave up first was never recorded at all.
"""

from __future__ import annotations

import asyncio
import json

import aiohttp
from aiohttp import web

from mcpeek.inspector.records import Msg
from tests.inspector.proxy.http_harness import RESULT, RPC

POLL_S = 0.02
POLLS = 500  # a bound on a wait for an event, not a timing assertion


async def _until(condition) -> bool:  # type: ignore[no-untyped-def]
    for _ in range(POLLS):
        if condition():
            return True
        await asyncio.sleep(POLL_S)
    return False


async def test_the_request_is_recorded_before_the_upstream_answers(proxied) -> None:  # type: ignore[no-untyped-def]
    arrived, release = asyncio.Event(), asyncio.Event()

    async def upstream(request: web.Request) -> web.Response:
        await request.read()
        arrived.set()
        await release.wait()  # no response head until the call is done
        return web.Response(body=json.dumps(RESULT).encode(), content_type="application/json")

    p = await proxied(upstream)
    body = json.dumps(RPC).encode()
    async with aiohttp.ClientSession() as client:
        call = asyncio.ensure_future(
            client.post(p.url + "/mcp", data=body, headers={"Content-Type": "application/json"})
        )
        await asyncio.wait_for(arrived.wait(), 10)
        # The upstream has the request and has not answered: the capture holds it already.
        assert await _until(lambda: p.msgs("c2s") == [body])
        assert p.http("response") == []
        release.set()
        response = await asyncio.wait_for(call, 10)
        assert response.status == 200
        await response.read()
        response.release()
    assert p.msgs("c2s") == [body]  # once, not again when the answer came
    assert [type(r).__name__ for r in p.records if isinstance(r, Msg)] == ["Msg", "Msg"]


async def test_a_request_whose_client_gave_up_is_still_recorded(proxied) -> None:  # type: ignore[no-untyped-def]
    arrived = asyncio.Event()

    async def upstream(request: web.Request) -> web.Response:
        await request.read()
        arrived.set()
        await asyncio.sleep(3600)  # never answers
        raise AssertionError("unreachable")

    p = await proxied(upstream)
    body = json.dumps(RPC).encode()
    async with aiohttp.ClientSession() as client:
        call = asyncio.ensure_future(
            client.post(p.url + "/mcp", data=body, headers={"Content-Type": "application/json"})
        )
        await asyncio.wait_for(arrived.wait(), 10)
        call.cancel()  # the client gives up
    assert await _until(lambda: bool(p.http("end")))
    assert p.msgs("c2s") == [body]
    assert [e.reason for e in p.http("end")] == ["client-closed"]
