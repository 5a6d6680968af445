"""The fast lane's flow control: a client that does not read holds the relay back
(no response buffered without bound), on the lane and after its hand-off to aiohttp."""

from __future__ import annotations

import asyncio
import re
import socket
from collections.abc import Iterator

import pytest
from aiohttp import web

from mcpeek.inspector.proxy.fast_lane import FastLane
from tests.inspector.proxy.http_harness import relaying
from tests.inspector.proxy.lane_harness import (
    Start,
    ended,
    ends,
    port_of,
    post,
    read_response,
    recorded,
    settled,
)

# Bigger than any socket buffers between the relay and a client that reads nothing.
SSE_TOTAL = 16 * 1024 * 1024
SSE_EVENT = b"data: " + b"e" * (64 * 1024 - 8) + b"\n\n"
# Far over the transport's high-water mark (64 KiB) plus one upstream chunk, far
# under what the relay would hold if it did not wait for the client.
BUFFER_BOUND = 1024 * 1024


class LaneWrites:
    """What the lanes' transports held: the most after any write, and their pauses
    (each lane's socket with a small send buffer)."""

    def __init__(self) -> None:
        self.most_buffered = 0
        self.paused = asyncio.Event()
        self.paused_now: set[FastLane] = set()


@pytest.fixture
def lane_writes(monkeypatch: pytest.MonkeyPatch) -> Iterator[LaneWrites]:
    seen = LaneWrites()
    made, write = FastLane.connection_made, FastLane.write
    pause, resume = FastLane.pause_writing, FastLane.resume_writing

    def small_send_buffer(lane: FastLane, transport: asyncio.BaseTransport) -> None:
        # The kernel then holds little of what the relay sends a client that does
        # not read: the relay's own buffer fills, and pauses, after a few KiB.
        transport.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
        made(lane, transport)

    def sampled_write(lane: FastLane, data: bytes) -> None:
        write(lane, data)
        if lane.transport is not None:
            seen.most_buffered = max(seen.most_buffered, lane.transport.get_write_buffer_size())

    def noted_pause(lane: FastLane) -> None:
        pause(lane)
        seen.paused_now.add(lane)
        seen.paused.set()

    def noted_resume(lane: FastLane) -> None:
        resume(lane)
        seen.paused_now.discard(lane)

    monkeypatch.setattr(FastLane, "connection_made", small_send_buffer)
    monkeypatch.setattr(FastLane, "write", sampled_write)
    monkeypatch.setattr(FastLane, "pause_writing", noted_pause)
    monkeypatch.setattr(FastLane, "resume_writing", noted_resume)
    yield seen


async def unread_connection(port: int) -> socket.socket:
    """A client connection that reads nothing until the test wraps it in a stream;
    a small receive buffer, so that the relay's writes back up soon."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.setblocking(False)
    await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", port))
    return sock


async def test_a_client_that_does_not_read_holds_a_big_sse_stream_back(
    proxied: Start, fast_count: list[int], lane_writes: LaneWrites, no_errors_logged: None
) -> None:
    sent = bytearray()
    finished = asyncio.Event()

    async def upstream(request: web.Request) -> web.StreamResponse:
        await request.read()
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        while len(sent) < SSE_TOTAL:
            await response.write(SSE_EVENT)
            sent.extend(SSE_EVENT)
        finished.set()
        return response

    p = await proxied(upstream)
    sock = await unread_connection(port_of(p))
    loop = asyncio.get_running_loop()
    await loop.sock_sendall(sock, post(port_of(p), 1))
    async with asyncio.timeout(10):
        await lane_writes.paused.wait()
    for _ in range(50):  # time for a relay that does not wait to read on and buffer
        await asyncio.sleep(0.01)
    assert not finished.is_set()  # the upstream is held back too
    assert lane_writes.most_buffered < BUFFER_BOUND
    reader, writer = await asyncio.open_connection(sock=sock)
    async with asyncio.timeout(60):
        _, body = await read_response(reader)
    writer.close()
    assert body == sent
    await settled(p, 1)
    assert fast_count == [1]
    assert ends(p) == ["complete"]


async def test_aiohttp_taking_over_a_connection_the_client_does_not_read_waits_too(
    fast_count: list[int], lane_writes: LaneWrites, no_errors_logged: None
) -> None:
    bodies: list[bytes] = []

    async def upstream(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        length = re.search(rb"\r\nContent-Length: (\d+)", head)
        if length is not None:
            await reader.readexactly(int(length[1]))
        else:  # relayed chunked
            await reader.readuntil(b"\r\n0\r\n\r\n")
        bodies.append(b"%d" % len(bodies) * (100 * 1024))
        # Head and body in one write, read at once: the lane ends its exchange on
        # the write that fills the client's buffer, and is left paused.
        writer.write(
            b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%b"
            % (len(bodies[-1]), bodies[-1])
        )
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(upstream, "127.0.0.1", 0)
    up_port = server.sockets[0].getsockname()[1]
    async with relaying(f"http://127.0.0.1:{up_port}/mcp") as (records, url):
        port = int(url.split(":")[2].split("/")[0])
        sock = await unread_connection(port)
        loop = asyncio.get_running_loop()
        await loop.sock_sendall(sock, post(port, 1))
        await ended(records, 1)
        assert lane_writes.paused_now  # the lane's exchange ended with writing paused
        # A request the lane leaves (its body chunked): aiohttp's protocol takes over.
        head, _, body = post(port, 2).partition(b"\r\n\r\n")
        head = head.replace(b"Content-Length", b"Transfer-Encoding: chunked\r\nX-Length")
        await loop.sock_sendall(sock, head + b"\r\n\r\n%x\r\n%b\r\n0\r\n\r\n" % (len(body), body))
        await recorded(records, "response", 2)  # aiohttp writes its answer, unread yet
        reader, writer = await asyncio.open_connection(sock=sock)
        async with asyncio.timeout(10):
            answers = [(await read_response(reader))[1] for _ in range(2)]
        writer.close()
        await ended(records, 2)
    server.close()
    assert answers == bodies
    assert fast_count == [1]
