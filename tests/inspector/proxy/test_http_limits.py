"""What the HTTP relay answers itself: refusals decided on the head, size limits, slow
heads, malformed requests; and the request body streamed, not buffered."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

import aiohttp
import pytest
from aiohttp import web

from mcpeek.inspector.records import Event, Http, Msg
from tests.inspector.proxy.http_harness import RESULT, RPC

BIG = 50 * 1024 * 1024


def _port(url: str) -> int:
    return int(url.rsplit(":", 1)[1])


def _notes(records: list[object]) -> list[str]:
    return [r.message or "" for r in records if isinstance(r, Event) and r.event == "note"]


async def test_a_refused_post_is_decided_on_its_head_and_its_body_never_read(proxied) -> None:  # type: ignore[no-untyped-def]
    """#21.2: a cross-origin text/plain POST (no preflight) announcing 50 MB: 403 at
    once, the connection closed, nothing of its body recorded or forwarded."""
    upstream_got: list[bytes] = []

    async def upstream(request: web.Request) -> web.Response:
        upstream_got.append(await request.read())
        return web.json_response(RESULT)

    p = await proxied(upstream)
    port = _port(p.url)
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(
        b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nOrigin: http://evil.example\r\n"
        b"Content-Type: text/plain\r\nContent-Length: %d\r\n\r\n" % (port, BIG)
    )
    writer.write(json.dumps(RPC).encode())  # the start of the body; the rest never comes
    await writer.drain()
    answer = await asyncio.wait_for(reader.read(), 10)  # until the proxy closes
    writer.close()
    assert answer.startswith(b"HTTP/1.1 403 ") and b"forbidden" in answer
    assert upstream_got == []
    assert [r for r in p.records if isinstance(r, Msg)] == []
    (request,) = p.http("request")
    assert request.method == "POST" and request.body is None and request.body_b64 is None
    assert [r.status for r in p.http("response")] == [403]
    assert [r.reason for r in p.http("end")] == ["refused"]
    assert any("evil.example" in note for note in _notes(p.records))


async def test_a_refused_complete_body_is_not_recorded_as_a_message(proxied) -> None:  # type: ignore[no-untyped-def]
    """A refused tools/call must not reach the capture as a message: replay would send it."""

    async def upstream(request: web.Request) -> web.Response:
        raise AssertionError("a refused request reached the upstream")

    p = await proxied(upstream)
    headers = {"Origin": "http://evil.example", "Content-Type": "text/plain"}
    async with (
        aiohttp.ClientSession() as client,
        client.post(p.url + "/mcp", data=json.dumps(RPC), headers=headers) as r,
    ):
        assert r.status == 403
    assert p.msgs() == []
    assert [r.reason for r in p.http("end")] == ["refused"]


async def test_a_body_over_the_limit_gets_a_recorded_413(proxied) -> None:  # type: ignore[no-untyped-def]
    async def upstream(request: web.Request) -> web.Response:
        raise AssertionError("an oversized request reached the upstream")

    p = await proxied(upstream, relay_options={"max_request_body": 1000})
    port = _port(p.url)
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(
        b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\n"
        b"Content-Length: 5000\r\n\r\n{" % port
    )
    await writer.drain()
    answer = await asyncio.wait_for(reader.read(), 10)
    writer.close()
    assert answer.startswith(b"HTTP/1.1 413 ")
    assert p.msgs() == []
    assert [r.status for r in p.http("response")] == [413]
    assert [r.reason for r in p.http("end")] == ["refused"]


async def test_a_chunked_body_over_the_limit_gets_a_413(proxied) -> None:  # type: ignore[no-untyped-def]
    async def upstream(request: web.Request) -> web.Response:
        await request.read()
        return web.json_response(RESULT)

    p = await proxied(upstream, relay_options={"max_request_body": 100_000})

    async def body() -> AsyncIterator[bytes]:
        for _ in range(20):
            yield b" " * 10_000

    async with (
        aiohttp.ClientSession() as client,
        client.post(p.url + "/mcp", data=body()) as r,
    ):
        assert r.status == 413
    assert [r.status for r in p.http("response")] == [413]
    assert len(p.http("request")) == 1


async def test_the_request_body_is_streamed_to_the_upstream(proxied) -> None:  # type: ignore[no-untyped-def]
    """The upstream reads the body's start while the client still holds back the rest
    (a proxy that buffers whole bodies deadlocks here); the message is recorded whole."""
    first_seen = asyncio.Event()

    async def upstream(request: web.Request) -> web.Response:
        first = await request.content.readany()
        first_seen.set()
        rest = await request.read()
        message = json.loads(first + rest)
        return web.json_response({**RESULT, "id": message["id"]})

    p = await proxied(upstream)
    big = {**RPC, "params": {"name": "x", "arguments": {"blob": "x" * 1_000_000}}}
    text = json.dumps(big).encode()  # too big to be read whole before it is sent
    head, tail = text[:10], text[10:]

    async def body() -> AsyncIterator[bytes]:
        yield head
        await asyncio.wait_for(first_seen.wait(), 10)
        yield tail

    headers = {"Content-Type": "application/json", "Content-Length": str(len(text))}
    async with (
        aiohttp.ClientSession() as client,
        client.post(p.url + "/mcp", data=body(), headers=headers) as r,
    ):
        assert r.status == 200 and (await r.json())["id"] == 1
    assert p.msgs("c2s") == [text]
    kinds = [(type(r).__name__, getattr(r, "phase", getattr(r, "dir", ""))) for r in p.records]
    assert kinds[:3] == [("Http", "request"), ("Msg", "c2s"), ("Http", "response")]


async def test_a_malformed_request_gets_aiohttps_400_and_it_is_recorded(proxied) -> None:  # type: ignore[no-untyped-def]
    async def upstream(request: web.Request) -> web.Response:
        return web.json_response(RESULT)

    p = await proxied(upstream)
    port = _port(p.url)
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Length: x\r\n\r\n" % port)
    await writer.drain()
    answer = await asyncio.wait_for(reader.read(), 10)
    writer.close()
    assert answer.split(b"\r\n", 1)[0].endswith(b" 400 Bad Request")
    for _ in range(100):  # recorded once sent
        if p.http("response"):
            break
        await asyncio.sleep(0.02)
    (response,) = p.http("response")
    assert response.status == 400
    assert len(p.http("request")) == 1 and len(p.http("end")) == 1
    assert any("400" in note for note in _notes(p.records))


async def test_a_connection_that_never_finishes_its_head_is_closed(proxied) -> None:  # type: ignore[no-untyped-def]
    async def upstream(request: web.Request) -> web.Response:
        return web.json_response(RESULT)

    p = await proxied(upstream, relay_options={"header_timeout": 0.3})
    port = _port(p.url)
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n" % port)  # and then nothing
    await writer.drain()
    assert await asyncio.wait_for(reader.read(), 10) == b""  # closed by the proxy
    writer.close()
    assert any("no complete request head" in note for note in _notes(p.records))
    # a client that sends its head in time is not affected
    async with aiohttp.ClientSession() as client, client.post(p.url + "/mcp", json=RPC) as r:
        assert r.status == 200
    assert isinstance(p.http("response")[0], Http)


@pytest.mark.parametrize("announced", [10_000, 1_000_000])  # read whole / streamed
async def test_a_client_that_leaves_mid_body_is_recorded_as_client_closed(  # type: ignore[no-untyped-def]
    proxied, announced: int
) -> None:
    async def upstream(request: web.Request) -> web.Response:
        await request.read()
        return web.json_response(RESULT)

    p = await proxied(upstream)
    port = _port(p.url)
    _, writer = await asyncio.open_connection("127.0.0.1", port)
    sent = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"blob":"' + b"x" * 70_000
    writer.write(
        b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\n"
        b"Content-Length: %d\r\n\r\n" % (port, announced) + sent[: announced // 2]
    )
    await writer.drain()
    writer.close()
    for _ in range(200):
        if p.http("end"):
            break
        await asyncio.sleep(0.02)
    assert [e.reason for e in p.http("end")] == ["client-closed"]
    assert len(p.http("request")) == 1
    assert all(m.partial for m in p.records if isinstance(m, Msg))
    assert p.http("response") == []  # no answer anyone could read was recorded
