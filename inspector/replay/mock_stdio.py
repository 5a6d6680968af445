"""The mock server over stdio: JSON-RPC lines in on stdin, out on stdout.

A thin front end to :class:`~mcpeek.inspector.replay.mock.MockSession`: each line
read is handed to the session at once (so two requests written together are
both seen before either is answered, as a real server would), and each
reaction is played by its own task, which waits the recorded delays and
writes the messages. A ``notifications/cancelled`` drops what a request still
had to send. When stdin ends (a client may close it right after its last
request and still read), what is still scheduled is sent at its recorded
time, plus ``grace`` seconds, and everything written reaches the pipe before
the session ends. A message recorded over HTTP may hold line breaks (pretty
JSON): on stdio they become spaces, so one message stays one line. With an
``upstream`` (``--on-miss forward``), misses go to the real server and
everything it sends comes back on stdout; requests forwarded and not yet
answered when stdin ends get ``forward_grace`` seconds (a real server may
still be starting).

stdout is the protocol pipe: nothing else is ever written there.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any, Protocol

from mcpeek.inspector.proxy.pipes import connect_reader, connect_writer
from mcpeek.inspector.replay.mock import MockServer, MockSession, Reaction
from mcpeek.inspector.replay.mock_play import Outgoing
from mcpeek.inspector.replay.rawjson import member_bytes
from mcpeek.inspector.replay.tape import Tape


class Upstream(Protocol):
    async def start(self) -> None: ...
    def send(self, data: bytes, *, shadow: bool = False) -> None: ...
    async def close(self, grace: float = 3.0) -> None: ...


class _Lines(asyncio.Protocol):
    def __init__(self, on_line: Callable[[bytes], None], done: asyncio.Event) -> None:
        self._buffer = bytearray()
        self._on_line = on_line
        self._done = done

    def data_received(self, data: bytes) -> None:
        self._buffer += data
        while (cut := self._buffer.find(b"\n")) >= 0:
            line = bytes(self._buffer[:cut]).rstrip(b"\r")
            del self._buffer[: cut + 1]
            if line.strip():
                self._on_line(line)

    def eof_received(self) -> bool | None:
        if bytes(self._buffer).strip():
            self._on_line(bytes(self._buffer))
        self._buffer.clear()
        self._done.set()
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        self._done.set()


class _Sink(asyncio.Protocol):
    def __init__(self, lost: asyncio.Event) -> None:
        self._lost = lost

    def connection_lost(self, exc: Exception | None) -> None:
        self._lost.set()


class StdioMock:
    def __init__(
        self,
        server: MockServer,
        *,
        tape: Tape | None = None,
        upstream: Callable[[Callable[[bytes], None]], Upstream] | None = None,
        note: Callable[[str], None] = lambda text: None,
        stdin_fd: int = 0,
        stdout_fd: int = 1,
        grace: float = 2.0,
        forward_grace: float = 15.0,
    ) -> None:
        self.server = server
        self.session: MockSession = server.session()
        self.tape = tape or Tape()
        self._make_upstream = upstream
        self._upstream: Upstream | None = None
        self.note = note
        self._fds = (stdin_fd, stdout_fd)
        self.grace = grace
        self.forward_grace = forward_grace
        self._forwarded: set[bytes] = set()  # ids (as JSON) of forwarded requests unanswered
        self._all_answered = asyncio.Event()
        self._out: Any = None
        self._tasks: dict[asyncio.Task[None], set[bytes]] = {}
        self._last_due = 0.0  # loop time when the last scheduled message is due

    async def run(self, stop: asyncio.Event | None = None) -> None:
        loop = asyncio.get_running_loop()
        eof, lost = asyncio.Event(), asyncio.Event()
        if self._make_upstream is not None:
            self._upstream = self._make_upstream(self._from_upstream)
            await self._upstream.start()
        self._out = await connect_writer(loop, self._fds[1], lambda: _Sink(lost))
        reader = await connect_reader(loop, self._fds[0], lambda: _Lines(self._line, eof))
        self._play(self.session.opening())
        waits = [loop.create_task(e.wait()) for e in (eof, lost, stop or asyncio.Event())]
        try:
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            self.tape.event("client-eof")
            if self._tasks and not lost.is_set():
                due = max(self._last_due - loop.time(), 0.0)
                await asyncio.wait(list(self._tasks), timeout=due + self.grace)
            if self._forwarded and not lost.is_set():
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._all_answered.wait(), self.forward_grace)
        finally:
            for task in [*waits, *self._tasks]:
                task.cancel()
            reader.close()
            if self._upstream is not None:
                await self._upstream.close()
            if not lost.is_set():
                await self._drain()
            with contextlib.suppress(Exception):
                self._out.close()

    async def _drain(self, timeout: float = 30.0) -> None:
        """Wait until what was written has gone into the pipe (bounded: a client
        that stopped reading must not keep the mock alive)."""
        pending = getattr(self._out, "get_write_buffer_size", None)
        if pending is None:  # a blocking writer: its writes are done when they return
            return
        deadline = asyncio.get_running_loop().time() + timeout
        while pending() and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.01)

    # -- client → mock -------------------------------------------------------------
    def _line(self, data: bytes) -> None:
        self.tape.msg("c2s", data)
        reaction: Reaction = self.session.receive(data)
        if reaction.note:
            self.note(reaction.note)
        if reaction.cancel is not None:
            for task, streams in list(self._tasks.items()):
                if reaction.cancel in streams:
                    task.cancel()
        if reaction.forward and self._upstream is not None:
            self._upstream.send(data, shadow=reaction.shadow)
            request_id = _request_id(data)
            if request_id is not None and not reaction.shadow:
                self._forwarded.add(request_id)
                self._all_answered.clear()
        self._play(reaction.out)

    def _play(self, out: list[Outgoing]) -> None:
        if not out:
            return
        loop = asyncio.get_running_loop()
        self._last_due = max(self._last_due, loop.time() + sum(item.delay for item in out))
        task = loop.create_task(self._send(out))
        self._tasks[task] = {item.stream for item in out if item.stream is not None}
        task.add_done_callback(lambda t: self._tasks.pop(t, None))

    async def _send(self, out: list[Outgoing]) -> None:
        for item in out:
            if item.delay > 0:
                await asyncio.sleep(item.delay)
            self._write(item.data)

    # -- mock → client -------------------------------------------------------------
    def _from_upstream(self, data: bytes) -> None:
        self._write(data)
        answered = _response_id(data)
        if answered is not None and answered in self._forwarded:
            self._forwarded.discard(answered)
            if not self._forwarded:
                self._all_answered.set()

    def _write(self, data: bytes) -> None:
        out = self._out
        if out is None or out.is_closing():
            return
        if b"\n" in data or b"\r" in data:  # only whitespace can hold them in JSON
            data = data.replace(b"\r", b" ").replace(b"\n", b" ")
        out.write(data + b"\n")
        self.tape.msg("s2c", data)


async def run_stdio(server: MockServer, **options: Any) -> MockSession:
    """Serve one client on this process's stdin/stdout until it closes stdin."""
    mock = StdioMock(server, **options)
    await mock.run()
    return mock.session


def _request_id(data: bytes) -> bytes | None:
    """The id of a request, as written (``None`` for anything else)."""
    if member_bytes(data, ("method",)) is None:
        return None
    return member_bytes(data, ("id",))


def _response_id(data: bytes) -> bytes | None:
    """The id of a response, as written (``None`` for anything else)."""
    if member_bytes(data, ("method",)) is not None:
        return None
    return member_bytes(data, ("id",))
