"""The HTTP relay's fast lane, and its hand-off to aiohttp's server, on real sockets.

Each test counts the exchanges the lane served itself, so that a test of the
hand-off cannot pass with every request going one way.
"""

from __future__ import annotations

import asyncio
import json
import re

import pytest
from aiohttp import web

from mcpeek.inspector.proxy.guard import RequestGuard
from mcpeek.inspector.proxy.http import HttpRelay
from mcpeek.inspector.records import Event, Http, Msg
from tests.inspector.proxy.http_harness import RPC, Proxied, listen
from tests.inspector.proxy.lane_harness import (
    Start,
    ends,
    json_upstream,
    port_of,
    post,
    read_response,
    settled,
)


async def test_several_requests_on_one_kept_alive_connection(
    proxied: Start, fast_count: list[int]
) -> None:
    p = await proxied(json_upstream)
    reader, writer = await asyncio.open_connection("127.0.0.1", port_of(p))
    for ident in (1, 2, 3):
        writer.write(post(port_of(p), ident))
        head, body = await read_response(reader)
        assert head.startswith(b"HTTP/1.1 200 OK\r\n")
        assert json.loads(body)["id"] == ident
    writer.close()
    await settled(p, 3)
    assert fast_count == [3]
    assert ends(p) == ["complete"] * 3
    # Per exchange: request, its message, response, the answer's message, end.
    for x in ("x1", "x2", "x3"):
        mine = [r for r in p.records if getattr(r, "x", None) == x or getattr(r, "ch", None) == x]
        assert [getattr(r, "phase", None) or getattr(r, "dir", None) for r in mine] == [
            "request",
            "c2s",
            "response",
            "s2c",
            "end",
        ]


@pytest.mark.parametrize(
    "odd",
    [
        pytest.param({"pad": 100_000}, id="100KB-body"),
        pytest.param({"extra": b"Expect: 100-continue\r\n"}, id="expect-continue"),
        pytest.param({"extra": b"Transfer-Encoding: chunked\r\n"}, id="chunked"),
    ],
)
async def test_a_request_the_lane_leaves_goes_to_aiohttp_mid_connection(
    proxied: Start, fast_count: list[int], odd: dict[str, object]
) -> None:
    p = await proxied(json_upstream)
    port = port_of(p)
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    for ident in (1, 2):
        writer.write(post(port, ident))
        assert json.loads((await read_response(reader))[1])["id"] == ident
    if "extra" in odd and b"chunked" in odd["extra"]:  # type: ignore[operator]
        body = json.dumps({**RPC, "id": 3}).encode()
        writer.write(
            b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n%x\r\n%b\r\n0\r\n\r\n" % (port, len(body), body)
        )
    elif "extra" in odd:  # the body only once the relay said 100 Continue, as curl does
        request = post(port, 3, extra=odd["extra"])  # type: ignore[arg-type]
        head_end = request.index(b"\r\n\r\n") + 4
        writer.write(request[:head_end])
        async with asyncio.timeout(10):
            assert await reader.readuntil(b"\r\n\r\n") == b"HTTP/1.1 100 Continue\r\n\r\n"
        writer.write(request[head_end:])
    else:
        writer.write(post(port, 3, pad=odd["pad"]))  # type: ignore[arg-type]
    async with asyncio.timeout(10):
        assert json.loads((await read_response(reader))[1])["id"] == 3
    writer.write(post(port, 4))  # the connection is aiohttp's now, and still works
    assert json.loads((await read_response(reader))[1])["id"] == 4
    writer.close()
    await settled(p, 4)
    assert fast_count == [2]
    assert ends(p) == ["complete"] * 4
    assert [json.loads(m)["id"] for m in p.msgs("c2s")] == [1, 2, 3, 4]


async def one_answered(
    proxied: Start,
) -> tuple[Proxied, int, asyncio.StreamReader, asyncio.StreamWriter]:
    """A relay, its port, and a connection to it that had a first request answered."""
    p = await proxied(json_upstream)
    port = port_of(p)
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(post(port, 1))
    assert json.loads((await read_response(reader))[1])["id"] == 1
    return p, port, reader, writer


async def test_pipelined_requests_in_one_write_are_answered_in_order(
    proxied: Start, fast_count: list[int]
) -> None:
    p, port, reader, writer = await one_answered(proxied)
    writer.write(post(port, 2) + post(port, 3) + post(port, 4))
    answers = [json.loads((await read_response(reader))[1])["id"] for _ in range(3)]
    assert answers == [2, 3, 4]
    writer.close()
    await settled(p, 4)
    assert fast_count == [1]
    assert ends(p) == ["complete"] * 4


async def test_a_malformed_request_after_a_fast_one_gets_aiohttp_s_recorded_400(
    proxied: Start, fast_count: list[int]
) -> None:
    p, _, reader, writer = await one_answered(proxied)
    writer.write(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nBad Header\r\n\r\n")
    head = await reader.readuntil(b"\r\n\r\n")
    assert head.split(b"\r\n")[0].endswith(b" 400 Bad Request")  # HTTP/1.0, as aiohttp says it
    writer.close()
    await settled(p, 2)
    assert fast_count == [1]
    assert ends(p) == ["complete", "complete"]
    assert [r.status for r in p.http("response")] == [200, 400]
    assert p.http("response")[1].by_proxy
    assert p.http("request")[1].method is None  # unparsed, as aiohttp's own 400 is recorded
    notes = [r.message for r in p.records if isinstance(r, Event) and r.event == "note"]
    assert any("malformed request 400" in (n or "") for n in notes)


async def test_sse_is_forwarded_unbuffered_and_a_client_leaving_mid_stream_is_recorded(
    proxied: Start, fast_count: list[int]
) -> None:
    seen = asyncio.Event()

    async def upstream(request: web.Request) -> web.StreamResponse:
        await request.read()
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        await response.write(b'data: {"jsonrpc":"2.0","method":"notifications/progress"}\n\n')
        await seen.wait()  # the second event only once the client had the first
        await response.write(b'data: {"jsonrpc":"2.0","id":1,"result":{}}\n\n')
        await asyncio.sleep(30)  # the stream stays open: the client leaves first
        return response

    p = await proxied(upstream)
    reader, writer = await asyncio.open_connection("127.0.0.1", port_of(p))
    writer.write(post(port_of(p), 1))
    head = await reader.readuntil(b"\r\n\r\n")
    assert b"\r\nTransfer-Encoding: chunked\r\n" in head
    async with asyncio.timeout(5):  # buffered, it would never come: the upstream waits
        first = await reader.readuntil(b"\n\n\r\n")
    assert b"notifications/progress" in first
    seen.set()
    async with asyncio.timeout(5):
        assert b'"result"' in await reader.readuntil(b"\n\n\r\n")
    writer.close()
    await settled(p, 1)
    assert fast_count == [1]
    assert ends(p) == ["client-closed"]
    assert len(p.msgs("s2c")) == 2


async def test_header_bytes_that_are_not_utf8_cross_the_lane_unchanged(
    fast_count: list[int],
) -> None:
    got: list[bytes] = []

    async def upstream(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        got.append(await reader.readuntil(b"\r\n\r\n"))
        writer.write(
            b"HTTP/1.1 200 OK\r\nX-Weird: \xff\xfe caf\xc3\xa9\r\nContent-Type: application/json"
            b"\r\nContent-Length: 2\r\n\r\n{}"
        )
        await writer.drain()

    server = await asyncio.start_server(upstream, "127.0.0.1", 0)
    up_port = server.sockets[0].getsockname()[1]
    records: list[object] = []
    guard = RequestGuard(0, allow_remote=True)
    async with HttpRelay(f"http://127.0.0.1:{up_port}/mcp", records.extend, guard) as relay:
        runner, port = await listen(relay)
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(b"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Odd: a\xff\x80b\r\n\r\n")
            head, body = await read_response(reader)
            writer.close()
        finally:
            await runner.cleanup()
    server.close()
    assert b"\r\nX-Weird: \xff\xfe caf\xc3\xa9\r\n" in head
    assert body == b"{}"
    assert b"\r\nX-Odd: a\xff\x80b\r\n" in got[0]
    assert fast_count == [1]
    assert [r.raw for r in records if isinstance(r, Msg)] == ["{}"]
    assert [r.reason for r in records if isinstance(r, Http) and r.phase == "end"] == ["complete"]


async def _heads_through(fast: bool, up_port: int, requests: list[bytes]) -> list[bytes]:
    """The response heads (``Date`` left out) the relay sends for ``requests``, one
    connection each, with the fast lane or with aiohttp's server alone."""
    guard = RequestGuard(0, allow_remote=True)
    heads = []
    async with HttpRelay(f"http://127.0.0.1:{up_port}/mcp", lambda _: None, guard) as relay:
        relay.fast_lane = fast
        runner, port = await listen(relay)
        try:
            for request in requests:
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
                writer.write(request)
                head = await reader.readuntil(b"\r\n\r\n")
                heads.append(re.sub(rb"\r\nDate: [^\r]*", b"", head))
                writer.close()
        finally:
            await runner.cleanup()
    return heads


@pytest.mark.parametrize(
    ("status", "body"),
    [
        ("200 OK\r\nContent-Length: 2", b"{}"),
        ("200 OK\r\nTransfer-Encoding: chunked", b"2\r\n{}\r\n0\r\n\r\n"),
        ("204 No Content\r\nContent-Length: 0", b""),
        ("304 Not Modified", b""),
        ("202 Accepted\r\nContent-Length: 0", b""),
        ("404 \r\nContent-Type: text/plain\r\nContent-Length: 1", b"x"),
    ],
)
@pytest.mark.parametrize("method", ["GET", "HEAD", "DELETE"])
@pytest.mark.parametrize("connection", [b"", b"Connection: close\r\n"])
async def test_the_lane_writes_the_head_aiohttp_would(
    fast_count: list[int], status: str, body: bytes, method: str, connection: bytes
) -> None:
    async def upstream(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        asked = await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 %s\r\n\r\n" % status.encode())
        if not asked.startswith(b"HEAD"):
            writer.write(body)
        await writer.drain()

    server = await asyncio.start_server(upstream, "127.0.0.1", 0)
    up_port = server.sockets[0].getsockname()[1]
    request = b"%s /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n%b\r\n" % (method.encode(), connection)
    fast = await _heads_through(True, up_port, [request])
    slow = await _heads_through(False, up_port, [request])
    server.close()
    assert fast_count == [1]
    assert fast == slow


async def test_a_body_over_the_limit_is_refused_without_asking_for_it(proxied: Start) -> None:
    p = await proxied(json_upstream, relay_options={"max_request_body": 1000})
    port = port_of(p)
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    request = post(port, 1, pad=2000, extra=b"Expect: 100-continue\r\n")
    writer.write(request[: request.index(b"\r\n\r\n") + 4])  # the head alone
    async with asyncio.timeout(10):
        head, _ = await read_response(reader)
    assert head.startswith(b"HTTP/1.1 413 ")  # no 100 Continue before it
    writer.close()
    await settled(p, 1)
    assert ends(p) == ["refused"]
