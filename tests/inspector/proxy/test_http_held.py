"""A big request body is recorded once its response reached the client, in its place.

Recording a 16 MB body took the event loop for a tenth of a second or more
right when the upstream's answer came, and the answer waited. The relay now
holds a body of 1 MiB or more until its response is relayed, or HOLD_FOR
seconds at most, and every record emitted meanwhile waits behind it: the
capture is the one an immediate recording writes.
"""

from __future__ import annotations

import asyncio
import json

import aiohttp
from aiohttp import web

from mcpeek.inspector.proxy import http_held
from mcpeek.inspector.proxy.guard import RequestGuard
from mcpeek.inspector.proxy.http import HttpRelay
from mcpeek.inspector.proxy.http_held import HOLD_AT, HeldRecords
from mcpeek.inspector.records import Event, Http, Msg, SeqRecord
from tests.inspector.proxy.http_harness import RESULT, listen

POLL_S = 0.02
POLLS = 500  # a bound on a wait for an event, not a timing assertion
BIG = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"pad": "y" * HOLD_AT}}


async def _until(condition) -> bool:  # type: ignore[no-untyped-def]
    for _ in range(POLLS):
        if condition():
            return True
        await asyncio.sleep(POLL_S)
    return False


def _kinds(records: list[SeqRecord]) -> list[str]:
    out = []
    for r in records:
        if isinstance(r, Msg):
            out.append(f"msg {r.dir}")
        elif isinstance(r, Http):
            out.append(f"http {r.phase}")
        else:
            out.append(type(r).__name__)
    return out


async def test_records_emitted_while_a_body_is_held_wait_behind_it() -> None:
    written: list[SeqRecord] = []
    held = HeldRecords(written.extend)
    body = Msg(dir="c2s", ch="x1", raw="{}")
    held.hold("x1", lambda: [body])
    note = Event(event="note", message="meanwhile")
    held.emit([note])
    assert written == []  # nothing overtakes the held body
    assert note.t > 0  # stamped when emitted, not when written
    held.relayed("x2")  # another exchange's response: not the one held
    assert written == []
    held.relayed("x1")
    assert written == [body, note]
    held.emit([Event(event="note", message="after")])
    assert len(written) == 3  # nothing held: written at once


async def test_a_held_body_is_written_after_hold_for_at_most(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(http_held, "HOLD_FOR", 0.01)
    written: list[SeqRecord] = []
    held = HeldRecords(written.extend)
    held.hold("x1", lambda: [Msg(dir="c2s", ch="x1", raw="{}")])
    assert await _until(lambda: len(written) == 1)
    assert not held.holding


async def test_a_big_body_is_recorded_after_its_response_in_its_place(proxied) -> None:  # type: ignore[no-untyped-def]
    answered, finish = asyncio.Event(), asyncio.Event()

    async def upstream(request: web.Request) -> web.StreamResponse:
        await request.read()
        response = web.StreamResponse(headers={"Content-Type": "application/json"})
        await response.prepare(request)
        answered.set()
        await finish.wait()  # the head is out, the body is not
        await response.write(json.dumps(RESULT).encode())
        await response.write_eof()
        return response

    p = await proxied(upstream)
    body = json.dumps(BIG).encode()
    async with (
        aiohttp.ClientSession() as client,
        client.post(
            p.url + "/mcp", data=body, headers={"Content-Type": "application/json"}
        ) as response,
    ):
        await asyncio.wait_for(answered.wait(), 10)
        # The client has the response head; the body it answers is still held,
        # and so is the response head's record, which must come after it.
        assert response.status == 200
        assert p.msgs("c2s") == []
        assert p.http("response") == []
        finish.set()
        assert json.loads(await response.read()) == RESULT
    assert await _until(lambda: bool(p.http("end")))
    assert p.msgs("c2s") == [body]
    assert _kinds(p.records) == [
        "http request",
        "msg c2s",
        "http response",
        "msg s2c",
        "http end",
    ]
    request_msg = next(r for r in p.records if isinstance(r, Msg) and r.dir == "c2s")
    assert 0 < request_msg.t <= p.http("response")[0].t  # stamped when it was forwarded


async def test_a_big_body_the_upstream_holds_is_recorded_all_the_same(  # type: ignore[no-untyped-def]
    proxied, monkeypatch
) -> None:
    monkeypatch.setattr(http_held, "HOLD_FOR", 0.05)
    arrived, release = asyncio.Event(), asyncio.Event()

    async def upstream(request: web.Request) -> web.Response:
        await request.read()
        arrived.set()
        await release.wait()  # no response head until the call is done
        return web.Response(body=json.dumps(RESULT).encode(), content_type="application/json")

    p = await proxied(upstream)
    body = json.dumps(BIG).encode()
    async with aiohttp.ClientSession() as client:
        call = asyncio.ensure_future(
            client.post(p.url + "/mcp", data=body, headers={"Content-Type": "application/json"})
        )
        await asyncio.wait_for(arrived.wait(), 10)
        # Unanswered: the held body is recorded anyway, HOLD_FOR after it went.
        assert await _until(lambda: p.msgs("c2s") == [body])
        assert p.http("response") == []
        release.set()
        response = await asyncio.wait_for(call, 10)
        await response.read()
        response.release()
    assert await _until(lambda: bool(p.http("end")))
    assert p.msgs("c2s") == [body]  # once
    assert _kinds(p.records)[:3] == ["http request", "msg c2s", "http response"]


async def test_a_held_body_is_recorded_when_the_proxy_stops(aiohttp_server, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(http_held, "HOLD_FOR", 3600.0)  # only the stop can write it
    arrived = asyncio.Event()

    async def never_answers(request: web.Request) -> web.Response:
        await request.read()
        arrived.set()
        await asyncio.sleep(3600)
        raise AssertionError("unreachable")

    app = web.Application(client_max_size=64 * 1024 * 1024)
    app.router.add_route("*", "/{tail:.*}", never_answers)
    upstream = await aiohttp_server(app)
    records: list[SeqRecord] = []
    relay = HttpRelay(str(upstream.make_url("/mcp")), records.extend, RequestGuard(0))
    await relay.__aenter__()
    runner, port = await listen(relay)
    relay.guard.port = port
    body = json.dumps(BIG).encode()
    async with aiohttp.ClientSession() as client:
        call = asyncio.ensure_future(
            client.post(
                f"http://127.0.0.1:{port}/mcp",
                data=body,
                headers={"Content-Type": "application/json"},
            )
        )
        await asyncio.wait_for(arrived.wait(), 10)
        assert relay.records.holding and records == []
        await relay.close_exchanges()  # the proxy stops, as on Ctrl-C
        await runner.cleanup()
        await relay.__aexit__()
        call.cancel()
    assert _kinds(records) == ["http request", "msg c2s", "http end"]
    assert [r.reason for r in records if isinstance(r, Http) and r.phase == "end"] == [
        "client-closed"
    ]
