"""The stdio relay when the user asked it to act on traffic (faults, scripts).

:class:`ActingStdioRelay` replaces the plain relay's two forwarding callbacks
and nothing else; the plain :class:`~mcpeek.inspector.proxy.stdio.StdioRelay`
(the fast path) runs when no action is configured. Here each complete line
is queued for its direction and a worker per direction asks ``decide`` about
it, waits out a delay, and carries out the outcome: the byte stream stays
ordered, so a message held (delayed) holds the later messages of its
direction behind it, as on the wire. An end of stream (EOF) waits in the
same queue, so it reaches the other side after every line before it.

What a peer receives is recorded as ``msg`` records (``made`` marks mcpeek's
bytes); what was done, with the original bytes, as an ``act`` record before.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

from mcpeek.inspector.proxy.lifecycle import STDOUT
from mcpeek.inspector.proxy.stdio import StdioRelay
from mcpeek.inspector.proxy.tap import LineSplitter, StdioTap
from mcpeek.inspector.records import Act, Direction, Event

if TYPE_CHECKING:
    from mcpeek.inspector.act.verdicts import Outcome
    from mcpeek.inspector.proxy.console import Console

Decide = Callable[[Direction, str, bytes], Awaitable["Outcome"]]
END = None  # the queue's end of stream
OTHER: dict[Direction, Direction] = {"c2s": "s2c", "s2c": "c2s"}


class ActingStdioRelay(StdioRelay):
    """The stdio relay with ``decide`` between reading a line and forwarding it."""

    def __init__(
        self, command: Sequence[str], tap: StdioTap, console: Console, decide: Decide, **kw: Any
    ) -> None:
        super().__init__(command, tap, console, **kw)
        self.decide = decide
        self._splitters: dict[Direction, LineSplitter] = {
            "c2s": LineSplitter(),
            "s2c": LineSplitter(),
        }
        self._queues: dict[Direction, asyncio.Queue[bytes | None]] = {}
        self._workers: list[asyncio.Task[None]] = []
        self._eof_queued = False
        self._client_cut = False  # a disconnect fault closed the pipe to the client
        self._ended: set[Direction] = set()  # directions whose queue reached its end

    # -- the two forwarding callbacks, now queued ---------------------------------------
    def from_client(self, data: bytes) -> None:
        self._enqueue("c2s", data)

    def from_server(self, data: bytes) -> None:
        self.lifecycle.server_activity(asyncio.get_running_loop().time())
        self._enqueue("s2c", data)

    def _enqueue(self, direction: Direction, data: bytes) -> None:
        queue = self._queue(direction)
        for line in self._splitters[direction].feed(data):
            queue.put_nowait(line)

    def _queue(self, direction: Direction) -> asyncio.Queue[bytes | None]:
        queue = self._queues.get(direction)
        if queue is None:
            queue = self._queues[direction] = asyncio.Queue()
            task = asyncio.get_running_loop().create_task(self._work(direction, queue))
            self._workers.append(task)
        return queue

    # -- ends of stream wait behind the lines before them ------------------------------------
    def client_eof(self) -> None:
        if self._closing_client_in or self._client_eof_seen:
            super().client_eof()
        elif not self._eof_queued:
            self._eof_queued = True
            self._queue("c2s").put_nowait(END)

    def server_pipe_closed(self, fd: int) -> None:
        if fd == STDOUT and fd in self.lifecycle.open_server_pipes and "s2c" not in self._ended:
            self._queue("s2c").put_nowait(END)
        else:
            super().server_pipe_closed(fd)

    # -- the workers ---------------------------------------------------------------------------
    async def _work(self, direction: Direction, queue: asyncio.Queue[bytes | None]) -> None:
        while True:
            line = await queue.get()
            if line is END:
                self._end(direction)
                return
            try:
                outcome = await self.decide(direction, "stdio", line)
            except Exception as exc:  # a bug in deciding never stops the traffic
                if self.on_tap_error is not None:
                    self.on_tap_error(exc)
                self._deliver(direction, line)
                self._observe(self.tap.line, direction, line)
                continue
            if outcome.delay:
                await asyncio.sleep(outcome.delay)
            self._carry(direction, line, outcome)

    def _carry(self, direction: Direction, line: bytes, outcome: Outcome) -> None:
        before = [outcome.act] if outcome.act is not None else []
        if outcome.disconnect:
            self._observe(self.tap.records, before)
            self._disconnect()
            return
        if outcome.answer is not None:  # the sender's request, answered in place
            self._observe(self.tap.line, direction, line, before=before)
            self._deliver(OTHER[direction], outcome.answer)
            self._observe(self.tap.line, OTHER[direction], outcome.answer, made="reply")
            return
        if outcome.forward is None:  # dropped
            self._observe(self.tap.records, before)
            return
        self._deliver(direction, outcome.forward)
        self._observe(self.tap.line, direction, outcome.forward, before=before, made=outcome.made)

    def _deliver(self, direction: Direction, line: bytes, *, newline: bool = True) -> None:
        """Write a line to the peer ``direction`` goes to (as the plain relay would)."""
        data = line + b"\n" if newline else line
        if direction == "c2s":
            if self._server_in is not None and not self._server_in.is_closing():
                self._server_in.write(data)
            else:
                self.unsent += len(data)
        elif self._client_out is not None and not self._client_out.is_closing():
            self._client_out.write(data)
        else:
            self.undelivered += len(data)

    def inject(self, direction: Direction, line: bytes, act: Act) -> None:
        """A message of mcpeek's own, towards the peer ``direction`` goes to: written
        between two whole lines (the workers write whole lines), then recorded."""
        self._deliver(direction, line)
        self._observe(self.tap.line, direction, line, before=[act], made="inject")

    def _end(self, direction: Direction) -> None:
        tail = self._splitters[direction].finish()
        if tail is not None:  # an unterminated last line goes on as it is
            self._deliver(direction, tail, newline=False)
            self._observe(self.tap.line, direction, tail, partial=True)
        self._ended.add(direction)
        if direction == "c2s":
            super().client_eof()
        else:
            super().server_pipe_closed(STDOUT)

    def _disconnect(self) -> None:
        if self._client_cut or self._client_out is None:
            return
        self._client_cut = True
        note = "mcpeek closed the pipe to the client (a disconnect fault)"
        self._observe(self.tap.records, [Event(event="note", message=note)])
        self._client_out.close()  # the client sees EOF; the lifecycle sees it go away

    async def _relay_client(self, transport: Any, client_out_proto: Any) -> int:
        try:
            return await super()._relay_client(transport, client_out_proto)
        finally:
            for task in self._workers:
                task.cancel()
