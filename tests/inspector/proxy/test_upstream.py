"""The relay's own upstream client (``proxy/upstream.py``): against real local
servers, a raw asyncio one where the bytes on the wire matter."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest
from multidict import CIMultiDict

from mcpeek.inspector.proxy.upstream import (
    UpstreamClient,
    UpstreamClosed,
    UpstreamError,
)

Reply = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


class RawServer:
    """A local server that answers each request with ``reply`` and keeps what it saw."""

    def __init__(self, reply: Reply) -> None:
        self.reply = reply
        self.connections = 0
        self.heads: list[bytes] = []
        self.server: asyncio.Server | None = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        with contextlib.suppress(ConnectionError, asyncio.IncompleteReadError):
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                self.heads.append(head)
                await self.reply(reader, writer)
                if writer.is_closing():
                    break
        writer.close()

    @property
    def origin(self) -> str:
        assert self.server is not None
        port = self.server.sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}"


@pytest.fixture
async def raw_server() -> AsyncIterator[Callable[[Reply], Awaitable[RawServer]]]:
    servers: list[RawServer] = []

    async def start(reply: Reply) -> RawServer:
        raw = RawServer(reply)
        raw.server = await asyncio.start_server(raw._serve, "127.0.0.1", 0)
        servers.append(raw)
        return raw

    yield start
    for raw in servers:
        assert raw.server is not None
        raw.server.close()


def answer(data: bytes, *, then_close: bool = False) -> Reply:
    async def reply(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(data)
        await writer.drain()
        if then_close:
            writer.close()

    return reply


OK = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"


async def test_a_chunked_response_streams_chunk_by_chunk(raw_server) -> None:  # type: ignore[no-untyped-def]
    release = asyncio.Event()

    async def reply(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nfirst\r\n")
        await writer.drain()
        await release.wait()  # the second chunk only once the first was received
        writer.write(b"6\r\nsecond\r\n0\r\n\r\n")
        await writer.drain()

    server = await raw_server(reply)
    client = UpstreamClient(server.origin)
    got: list[bytes] = []
    async with await client.request("GET", "/", CIMultiDict()) as response:
        async for chunk in response.chunks():
            got.append(chunk)
            release.set()
        assert response.at_eof()
    await client.close()
    assert got == [b"first", b"second"]


async def test_headers_keep_order_duplicates_and_bytes_that_are_not_utf8(raw_server) -> None:  # type: ignore[no-untyped-def]
    head = (
        b"HTTP/1.1 201 Made It\r\nSet-Cookie: a=1\r\nX-Weird: \xff\xfe\r\n"
        b"set-cookie: b=2\r\nContent-Length: 0\r\n\r\n"
    )
    server = await raw_server(answer(head))
    client = UpstreamClient(server.origin)
    async with await client.request("GET", "/", CIMultiDict()) as response:
        assert (response.status, response.reason) == (201, "Made It")
        assert list(response.headers.items()) == [
            ("Set-Cookie", "a=1"),
            ("X-Weird", "\udcff\udcfe"),  # surrogateescape, as aiohttp's parser gives it
            ("set-cookie", "b=2"),
            ("Content-Length", "0"),
        ]
        assert await response.read() == b""
    await client.close()


async def test_a_connection_is_reused_after_a_complete_response_only(raw_server) -> None:  # type: ignore[no-untyped-def]
    server = await raw_server(answer(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n0123456789"))
    client = UpstreamClient(server.origin)
    for _ in range(3):
        async with await client.request("GET", "/", CIMultiDict()) as response:
            assert await response.read() == b"0123456789"
    assert server.connections == 1
    # Released before its body was read: closed, the next request opens another.
    async with await client.request("GET", "/", CIMultiDict()):
        pass
    async with await client.request("GET", "/", CIMultiDict()) as response:
        assert await response.read() == b"0123456789"
    assert server.connections == 2
    await client.close()


async def test_no_reuse_when_the_upstream_says_close(raw_server) -> None:  # type: ignore[no-untyped-def]
    closing = b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nuntil close"
    server = await raw_server(answer(closing, then_close=True))
    client = UpstreamClient(server.origin)
    for _ in range(2):
        async with await client.request("GET", "/", CIMultiDict()) as response:
            assert await response.read() == b"until close"  # its end is the close
    assert server.connections == 2
    await client.close()


async def test_an_upstream_that_closes_mid_body(raw_server) -> None:  # type: ignore[no-untyped-def]
    async def reply(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npartial")
        await writer.drain()
        writer.close()

    server = await raw_server(reply)
    client = UpstreamClient(server.origin)
    got: list[bytes] = []
    async with await client.request("GET", "/", CIMultiDict()) as response:
        with pytest.raises(UpstreamClosed):
            async for chunk in response.chunks():
                got.append(chunk)
        assert not response.at_eof()
    assert got == [b"partial"]
    await client.close()


async def test_an_upstream_that_closes_before_answering(raw_server) -> None:  # type: ignore[no-untyped-def]
    async def reply(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.close()

    server = await raw_server(reply)
    client = UpstreamClient(server.origin)
    with pytest.raises(UpstreamError, match="unanswered"):
        await client.request("POST", "/", CIMultiDict(), b"{}")
    await client.close()


async def test_an_unreachable_upstream(unused_tcp_port: int) -> None:
    client = UpstreamClient(f"http://127.0.0.1:{unused_tcp_port}")
    with pytest.raises(UpstreamError, match="cannot connect"):
        await client.request("GET", "/", CIMultiDict())
    await client.close()


async def test_request_bodies_go_as_given(raw_server) -> None:  # type: ignore[no-untyped-def]
    bodies: list[bytes] = []

    async def reply(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = server.heads[-1].lower()
        if b"transfer-encoding: chunked" in head:
            bodies.append(await reader.readuntil(b"0\r\n\r\n"))
        else:
            length = int(head.split(b"content-length: ")[1].split(b"\r\n")[0])
            bodies.append(await reader.readexactly(length))
        writer.write(OK)
        await writer.drain()

    server = await raw_server(reply)
    client = UpstreamClient(server.origin)

    async def pieces() -> AsyncIterator[bytes]:
        yield b"abc"
        yield b""  # nothing to send: no empty chunk (it would end the body)
        yield b"defgh"

    sent: list[bool] = []
    headers = CIMultiDict([("Content-Type", "application/json"), ("Content-Length", "99")])
    for body, hdrs in [
        (b"{}", headers),  # bytes: their own length, whatever the header said
        (pieces(), CIMultiDict()),  # streamed, no length: chunked
        (pieces(), CIMultiDict([("Content-Length", "8")])),  # streamed with a length: raw
    ]:
        response = await client.request("POST", "/", hdrs, body, sent=lambda: sent.append(True))
        async with response:
            assert await response.read() == b"ok"
    await client.close()
    assert bodies == [b"{}", b"3\r\nabc\r\n5\r\ndefgh\r\n0\r\n\r\n", b"abcdefgh"]
    assert sent == [True]  # called for the body of bytes, once written
    assert b"content-type: application/json\r\ncontent-length: 2\r\n" in server.heads[0].lower()
    assert server.connections == 1


async def test_a_body_source_that_fails_fails_the_request(raw_server) -> None:  # type: ignore[no-untyped-def]
    async def reply(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read(1)  # then wait: the client gives up first
        await asyncio.sleep(3600)

    server = await raw_server(reply)
    client = UpstreamClient(server.origin)

    async def broken() -> AsyncIterator[bytes]:
        yield b"abc"
        raise LookupError("the client went away")

    with pytest.raises(LookupError, match="went away"):
        await client.request("POST", "/", CIMultiDict(), broken())
    await client.close()


async def test_informational_heads_are_skipped_and_head_has_no_body(raw_server) -> None:  # type: ignore[no-untyped-def]
    async def reply(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if server.heads[-1].startswith(b"HEAD"):
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n")
        else:
            await reader.readexactly(1)  # the POST's body
            writer.write(b"HTTP/1.1 100 Continue\r\n\r\n" + OK)
        await writer.drain()

    server = await raw_server(reply)
    client = UpstreamClient(server.origin)
    async with await client.request("POST", "/", CIMultiDict(), b"x") as response:
        assert response.status == 200 and await response.read() == b"ok"
    async with await client.request("HEAD", "/", CIMultiDict()) as response:
        assert response.headers["Content-Length"] == "1000" and await response.read() == b""
    await client.close()


async def test_a_pooled_connection_closed_unanswered_is_retried_for_get(raw_server) -> None:  # type: ignore[no-untyped-def]
    served: dict[asyncio.StreamWriter, int] = {}

    async def reply(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        served[writer] = served.get(writer, 0) + 1
        if served[writer] == 1:
            writer.write(OK)
            await writer.drain()
        else:  # its idle timeout, as the next request arrived
            writer.close()

    server = await raw_server(reply)
    client = UpstreamClient(server.origin)
    for method in ("GET", "GET"):  # the second on the pooled connection, then a new one
        async with await client.request(method, "/", CIMultiDict()) as response:
            assert await response.read() == b"ok"
    assert server.connections == 2
    with pytest.raises(UpstreamError, match="unanswered"):  # a POST is not sent twice
        await client.request("POST", "/", CIMultiDict(), b"{}")
    assert server.connections == 2
    await client.close()


async def test_a_get_is_tried_twice_at_most(raw_server) -> None:  # type: ignore[no-untyped-def]
    async def reply(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.close()  # every request, on every connection, unanswered

    server = await raw_server(reply)
    client = UpstreamClient(server.origin)
    async with asyncio.timeout(5):  # not a third try, nor more
        with pytest.raises(UpstreamError, match="unanswered"):
            await client.request("GET", "/", CIMultiDict())
    assert server.connections == 2
    await client.close()
