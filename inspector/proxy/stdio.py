"""The transparent stdio wrapper: ``mcpeek stdio -- CMD ARG...``.

A client spawns mcpeek instead of the server; mcpeek spawns the server and
relays stdin → server and server → stdout byte for byte. Each chunk is
written to the other side *first* and only then handed to the tap that turns
it into records, so observation can neither reorder nor alter the traffic.
Everything runs on one asyncio loop with protocol callbacks (no per-line
awaits): a chunk is forwarded in the same callback that received it.

Back-pressure is end to end: when the server stops reading its stdin, its
pipe buffer fills, and mcpeek stops reading the client's stdin; likewise for
a client that stops reading stdout. Memory is bounded by the pipe buffers,
the capture writer's buffer and the longest line in flight.

Lifecycle, like a transparent wrapper: SIGINT/SIGTERM/SIGHUP are forwarded to
the server's process group; EOF on stdin closes the server's stdin, then,
after a grace period, SIGTERM, then SIGKILL; when the server closes its
stdout mcpeek closes its own; mcpeek exits with the server's code (128+N for
death by signal N).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from mcpeek.inspector.proxy.console import Console
from mcpeek.inspector.proxy.pipes import (
    BlockingWriter,
    connect_reader,
    connect_writer,
    keep_blocking_modes,
    printable,
    restore_blocking_modes,
    widen_pipe,
    widen_reads,
    widen_transport_pipe,
)
from mcpeek.inspector.proxy.tap import StdioTap

FORWARDED_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
SPAWN_FAILED = 2


class Writable(Protocol):
    def write(self, data: bytes) -> None: ...
    def close(self) -> None: ...
    def is_closing(self) -> bool: ...


class _ServerSide(asyncio.SubprocessProtocol):
    def __init__(self, relay: StdioRelay) -> None:
        self.relay = relay

    def pipe_data_received(self, fd: int, data: bytes | str) -> None:
        assert isinstance(data, bytes)
        if fd == 1:
            self.relay.from_server(data)
        else:
            self.relay.from_server_stderr(data)

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        self.relay.server_pipe_closed(fd)

    def process_exited(self) -> None:
        self.relay.server_exited()

    # The server's stdin pipe filled up (or drained): slow the client down.
    def pause_writing(self) -> None:
        self.relay.pause(self.relay.client_in)

    def resume_writing(self) -> None:
        self.relay.resume(self.relay.client_in)


class _ClientIn(asyncio.Protocol):
    def __init__(self, relay: StdioRelay) -> None:
        self.relay = relay

    def data_received(self, data: bytes) -> None:
        self.relay.from_client(data)

    def eof_received(self) -> bool:
        self.relay.client_eof()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.relay.client_eof()


class _ClientOut(asyncio.Protocol):
    def __init__(self, relay: StdioRelay) -> None:
        self.relay = relay
        self.closed = asyncio.get_running_loop().create_future()

    # The client stopped reading our stdout: stop reading the server's.
    def pause_writing(self) -> None:
        self.relay.pause(self.relay.server_out)

    def resume_writing(self) -> None:
        self.relay.resume(self.relay.server_out)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.closed.done():
            self.closed.set_result(None)
        self.relay.client_out_lost()


class StdioRelay:
    """One run of the wrapper. ``tap`` receives what was forwarded."""

    def __init__(
        self,
        command: Sequence[str],
        tap: StdioTap,
        console: Console,
        *,
        grace: float = 3.0,
        stdin_fd: int = 0,
        stdout_fd: int = 1,
        on_tap_error: Callable[[BaseException], None] | None = None,
    ) -> None:
        self.command = list(command)
        self.tap = tap
        self.console = console
        self.grace = grace
        self.stdin_fd = stdin_fd
        self.stdout_fd = stdout_fd
        self.on_tap_error = on_tap_error
        self.client_in: Any = None
        self.server_out: Any = None
        self._client_out: Writable | None = None
        self._server_in: Any = None
        self._server_err: Any = None
        self._process: asyncio.SubprocessTransport | None = None
        self._exited: asyncio.Future[None] | None = None
        self._open_server_pipes = {1, 2}
        self._pipes_done: asyncio.Future[None] | None = None
        self._client_eof_seen = False
        self._escalation: asyncio.Task[None] | None = None
        self.spawned = False
        self._closing_client_out = False  # we closed it (vs. the client going away)
        self._server_out_paused = False
        self._last_server_data = 0.0
        self.undelivered = 0  # bytes of server output the client was gone for
        self.unsent = 0  # bytes of client input the server's stdin was closed for
        self._closing_client_in = False  # we closed it (vs. the client's EOF)

    # -- forwarding: write first, observe second -------------------------------
    def from_client(self, data: bytes) -> None:
        if self._server_in is not None and not self._server_in.is_closing():
            self._server_in.write(data)
        elif self._server_in is not None:
            if not self.unsent:  # the capture says where delivery stopped, once
                note = "the server's stdin is closed: what the client sends now never reaches it"
                self._observe(self.tap.event, "note", message=note)
            self.unsent += len(data)
        self._observe(self.tap.data, "c2s", data)

    def from_server(self, data: bytes) -> None:
        self._last_server_data = asyncio.get_running_loop().time()
        if self._client_out is not None and not self._client_out.is_closing():
            self._client_out.write(data)
        else:
            self.undelivered += len(data)
        self._observe(self.tap.data, "s2c", data)

    def from_server_stderr(self, data: bytes) -> None:
        self._last_server_data = asyncio.get_running_loop().time()
        self.console.passthrough(data)
        self._observe(self.tap.stderr, data)

    def _observe(self, fn: Callable[..., None], *args: Any, **kwargs: Any) -> None:
        try:
            fn(*args, **kwargs)
        except Exception as exc:  # observation must never stop the relay
            if self.on_tap_error is not None:
                self.on_tap_error(exc)

    # -- flow control ---------------------------------------------------------
    def pause(self, transport: Any) -> None:
        if transport is not None and not transport.is_closing():
            transport.pause_reading()
            if transport is self.server_out:
                self._server_out_paused = True
                self._last_server_data = asyncio.get_running_loop().time()

    def _client_holds_up_the_server(self) -> bool:
        """The server's stdout is paused because a live client is slow to read it. Once
        the client or that pipe is gone, a pause flag left set must not count."""
        return (
            self._server_out_paused
            and self.server_out is not None
            and not self.server_out.is_closing()
            and self._client_out is not None
            and not self._client_out.is_closing()
        )

    def resume(self, transport: Any) -> None:
        if transport is not None and not transport.is_closing():
            transport.resume_reading()
            if transport is self.server_out:
                self._server_out_paused = False
                # The idle clock restarts: the pause was the client's, not the server's.
                self._last_server_data = asyncio.get_running_loop().time()

    def client_out_lost(self) -> None:
        """Our stdout closed. If the client went away, let the server find out (EPIPE)
        as it would without mcpeek, instead of reading and dropping its output."""
        if self._closing_client_out:
            return
        self._observe(self.tap.event, "note", message="the client closed mcpeek's stdout")
        if self.server_out is not None and not self.server_out.is_closing():
            self.server_out.close()

    def client_err_lost(self) -> None:
        """Our stderr's reader went away (the client died): the server gets EPIPE on its
        stderr, as it would without mcpeek, instead of waiting on a paused pipe."""
        if self._server_err is not None and not self._server_err.is_closing():
            self._observe(self.tap.event, "note", message="the client closed mcpeek's stderr")
            self._server_err.close()

    # -- endings --------------------------------------------------------------
    def client_eof(self) -> None:
        if self._client_eof_seen:
            return
        self._client_eof_seen = True
        self._observe(self.tap.eof, "c2s")
        if self._closing_client_in:
            return  # mcpeek is done and stops reading: the client sent no EOF
        self._observe(self.tap.event, "client-eof")
        if self._server_in is not None:
            self._server_in.close()  # flushes what is buffered, then closes
        if self._exited is not None and not self._exited.done():
            self._escalation = asyncio.get_running_loop().create_task(self._escalate())

    async def _escalate(self) -> None:
        """Grace, SIGTERM, grace, SIGKILL. The grace only runs while the server is free
        to exit: time it spends blocked on output the client has not read yet is the
        client's, and does not count."""
        assert self._exited is not None
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGKILL):
            waited = 0.0
            while waited < self.grace:
                started = loop.time()
                step = min(0.1, self.grace - waited)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(asyncio.shield(self._exited), step)
                if self._exited.done():
                    return
                if not self._client_holds_up_the_server():
                    waited += loop.time() - started
            self._observe(self.tap.event, "note", message=f"sending {sig.name} to the server")
            self._signal_server(sig)

    def server_pipe_closed(self, fd: int) -> None:
        if fd == 1:
            self._observe(self.tap.eof, "s2c")
            self._observe(self.tap.event, "server-eof")
            if self._client_out is not None:
                self._closing_client_out = True
                self._client_out.close()
        elif fd == 2:
            self._observe(self.tap.eof, "stderr")
        self._open_server_pipes.discard(fd)
        if not self._open_server_pipes and self._pipes_done and not self._pipes_done.done():
            self._pipes_done.set_result(None)

    def server_exited(self) -> None:
        if self._exited is not None and not self._exited.done():
            self._exited.set_result(None)

    def _signal_server(self, sig: int) -> None:
        if self._process is None or self._process.get_returncode() is not None:
            return
        pid = self._process.get_pid()
        try:
            os.killpg(pid, sig)
        except (ProcessLookupError, PermissionError):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)

    def _forward_signal(self, sig: int) -> None:
        self._observe(
            self.tap.event, "note", message=f"forwarding {signal.Signals(sig).name} to the server"
        )
        self._signal_server(sig)

    # -- the run --------------------------------------------------------------
    async def run(self) -> int:
        loop = asyncio.get_running_loop()
        self._exited = loop.create_future()
        self._pipes_done = loop.create_future()
        try:
            transport, _ = await loop.subprocess_exec(
                lambda: _ServerSide(self),
                *self.command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                # Its own process group: a terminal's Ctrl-C reaches the
                # server once, through us, not twice.
                process_group=0,
            )
        except (OSError, ValueError) as exc:
            reason = _spawn_error(self.command, exc)
            self._observe(self.tap.event, "note", message=reason)
            self.console.say(reason, force=True)
            return SPAWN_FAILED
        self._process = transport
        self.spawned = True
        try:
            return await self._relay(loop, transport)
        except BaseException:
            self._signal_server(signal.SIGKILL)  # never leave the server orphaned
            raise
        finally:
            transport.close()

    async def _relay(
        self, loop: asyncio.AbstractEventLoop, transport: asyncio.SubprocessTransport
    ) -> int:
        self._server_in = transport.get_pipe_transport(0)
        self.server_out = transport.get_pipe_transport(1)
        for pipe in (self._server_in, self.server_out):
            widen_transport_pipe(pipe)
        widen_reads(self.server_out)
        widen_pipe(self.stdin_fd)
        widen_pipe(self.stdout_fd)
        self._observe(self.tap.event, "spawn", pid=transport.get_pid())

        client_out_proto = _ClientOut(self)
        modes = keep_blocking_modes((self.stdin_fd, self.stdout_fd))
        server_err = self._server_err = transport.get_pipe_transport(2)
        # A stderr nobody drains slows the server's stderr, as without mcpeek; it
        # must never stall the relay of stdin and stdout.
        self.console.follow_backpressure(
            lambda: self.pause(server_err), lambda: self.resume(server_err), self.client_err_lost
        )
        try:
            return await self._relay_client(loop, transport, client_out_proto)
        finally:
            restore_blocking_modes(modes)

    async def _relay_client(
        self,
        loop: asyncio.AbstractEventLoop,
        transport: asyncio.SubprocessTransport,
        client_out_proto: _ClientOut,
    ) -> int:
        self._client_out = await connect_writer(loop, self.stdout_fd, lambda: client_out_proto)
        self.client_in = await connect_reader(loop, self.stdin_fd, lambda: _ClientIn(self))
        widen_reads(self.client_in)
        for sig in FORWARDED_SIGNALS:
            loop.add_signal_handler(sig, self._forward_signal, sig)
        try:
            await self._exited  # type: ignore[misc]
            await self._drain_server(loop)
        finally:
            for sig in FORWARDED_SIGNALS:
                loop.remove_signal_handler(sig)
            if self._escalation is not None:
                self._escalation.cancel()
        code = transport.get_returncode()
        assert code is not None
        if code < 0:
            self._observe(self.tap.event, "exit", signal=-code)
        else:
            self._observe(self.tap.event, "exit", code=code)
        await self._close_client(client_out_proto)
        if self.undelivered:
            self.console.say(
                f"the client went away before {self.undelivered} bytes of the "
                "server's output could reach it (they are in the capture)"
            )
        if self.unsent:
            self.console.say(
                f"the server's stdin was closed for {self.unsent} bytes the client sent "
                "(they are in the capture, after a note)"
            )
        return 128 - code if code < 0 else code

    async def _drain_server(self, loop: asyncio.AbstractEventLoop) -> None:
        """After the exit, read what the server left in its pipes. A grandchild may hold
        them open: stop after 2 s without data, unless the client is the one holding
        things up (reading paused by back-pressure), which is worth waiting for."""
        assert self._pipes_done is not None
        while not self._pipes_done.done():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(self._pipes_done), 0.5)
            idle = loop.time() - self._last_server_data
            held_up = self._client_holds_up_the_server()
            if not self._pipes_done.done() and not held_up and idle > 2.0:
                for fd in list(self._open_server_pipes):
                    if fd == 1 and self.server_out is not None:
                        self.server_out.close()
                    self.server_pipe_closed(fd)

    async def _close_client(self, client_out_proto: _ClientOut) -> None:
        if self._client_out is not None:
            self._closing_client_out = True
            self._client_out.close()
            if not isinstance(self._client_out, BlockingWriter):
                # Every byte reaches the client, however slowly it reads (as it would
                # from the server itself); it ends early only if the client goes away.
                await client_out_proto.closed
        if self.client_in is not None:
            self._closing_client_in = True
            self.client_in.close()


def _spawn_error(command: Sequence[str], exc: BaseException) -> str:
    name = printable(command[0]) if command else "''"
    if command and os.path.isdir(command[0]):
        return f"cannot start the server: {name}: is a directory"
    if isinstance(exc, FileNotFoundError):
        return f"cannot start the server: {name}: command not found"
    if isinstance(exc, PermissionError):
        return f"cannot start the server: {name}: permission denied"
    detail = getattr(exc, "strerror", None) or str(exc)
    return f"cannot start the server: {name}: {detail}"
