"""The fast lane's flow control: a client that does not read holds the relay back
(no response buffered without bound), on the lane and after its hand-off to aiohttp."""

from __future__ import annotations

import asyncio
import logging
import socket
from collections.abc import Iterator

import pytest
from aiohttp import web

from mcpeek.inspector.proxy.fast_lane import FastLane
from tests.inspector.proxy.lane_harness import (
    Start,
    ends,
    port_of,
    post,
    read_response,
    settled,
)

# Bigger than any socket buffers between the relay and a client that reads nothing.
SSE_TOTAL = 16 * 1024 * 1024
SSE_EVENT = b"data: " + b"e" * (64 * 1024 - 8) + b"\n\n"
# Far over the transport's high-water mark (64 KiB) plus one upstream chunk, far
# under what the relay would hold if it did not wait for the client.
BUFFER_BOUND = 1024 * 1024


class LaneWrites:
    """What the lanes' transports held: the most after any write, and their pauses."""

    def __init__(self) -> None:
        self.most_buffered = 0
        self.paused = asyncio.Event()
        self.paused_now: set[FastLane] = set()


@pytest.fixture
def lane_writes(monkeypatch: pytest.MonkeyPatch) -> Iterator[LaneWrites]:
    seen = LaneWrites()
    write, pause, resume = FastLane.write, FastLane.pause_writing, FastLane.resume_writing

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

    monkeypatch.setattr(FastLane, "write", sampled_write)
    monkeypatch.setattr(FastLane, "pause_writing", noted_pause)
    monkeypatch.setattr(FastLane, "resume_writing", noted_resume)
    yield seen


@pytest.fixture
def no_errors_logged(caplog: pytest.LogCaptureFixture) -> Iterator[None]:
    """No error (a callback's traceback: asyncio logs them) while the test runs."""
    with caplog.at_level(logging.ERROR):
        yield
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []


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
