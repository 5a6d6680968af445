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

from inspector.proxy.console import Console
from inspector.proxy.pipes import (
    BlockingWriter,
    connect_reader,
    connect_writer,
    widen_pipe,
    widen_reads,
)
from inspector.proxy.tap import StdioTap

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
        self._process: asyncio.SubprocessTransport | None = None
        self._exited: asyncio.Future[None] | None = None
        self._open_server_pipes = {1, 2}
        self._pipes_done: asyncio.Future[None] | None = None
        self._client_eof_seen = False
        self._escalation: asyncio.Task[None] | None = None
        self.spawned = False

    # -- forwarding: write first, observe second -------------------------------
    def from_client(self, data: bytes) -> None:
        if self._server_in is not None and not self._server_in.is_closing():
            self._server_in.write(data)
        self._observe(self.tap.data, "c2s", data)

    def from_server(self, data: bytes) -> None:
        if self._client_out is not None and not self._client_out.is_closing():
            self._client_out.write(data)
        self._observe(self.tap.data, "s2c", data)

    def from_server_stderr(self, data: bytes) -> None:
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

    def resume(self, transport: Any) -> None:
        if transport is not None and not transport.is_closing():
            transport.resume_reading()

    # -- endings --------------------------------------------------------------
    def client_eof(self) -> None:
        if self._client_eof_seen:
            return
        self._client_eof_seen = True
        self._observe(self.tap.eof, "c2s")
        self._observe(self.tap.event, "client-eof")
        if self._server_in is not None:
            self._server_in.close()  # flushes what is buffered, then closes
        if self._exited is not None and not self._exited.done():
            self._escalation = asyncio.get_running_loop().create_task(self._escalate())

    async def _escalate(self) -> None:
        assert self._exited is not None
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                await asyncio.wait_for(asyncio.shield(self._exited), self.grace)
                return
            except TimeoutError:
                self._observe(self.tap.event, "note", message=f"sending {sig.name} to the server")
                self._signal_server(sig)

    def server_pipe_closed(self, fd: int) -> None:
        if fd == 1:
            self._observe(self.tap.eof, "s2c")
            self._observe(self.tap.event, "server-eof")
            if self._client_out is not None:
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
        self._server_in = transport.get_pipe_transport(0)
        self.server_out = transport.get_pipe_transport(1)
        for pipe in (self._server_in, self.server_out):
            widen_pipe(pipe.get_extra_info("pipe").fileno())
        widen_reads(self.server_out)
        widen_pipe(self.stdin_fd)
        widen_pipe(self.stdout_fd)
        self._observe(self.tap.event, "spawn", pid=transport.get_pid())

        client_out_proto = _ClientOut(self)
        self._client_out = await connect_writer(loop, self.stdout_fd, lambda: client_out_proto)
        self.client_in = await connect_reader(loop, self.stdin_fd, lambda: _ClientIn(self))
        widen_reads(self.client_in)
        for sig in FORWARDED_SIGNALS:
            loop.add_signal_handler(sig, self._forward_signal, sig)
        try:
            await self._exited
            # A grandchild may hold the pipes open: don't wait for it forever.
            try:
                await asyncio.wait_for(asyncio.shield(self._pipes_done), 2.0)
            except TimeoutError:
                for fd in list(self._open_server_pipes):
                    self.server_pipe_closed(fd)
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
        transport.close()
        return 128 - code if code < 0 else code

    async def _close_client(self, client_out_proto: _ClientOut) -> None:
        if self._client_out is not None:
            self._client_out.close()
            if not isinstance(self._client_out, BlockingWriter):
                # Let the last bytes drain to the client, but not forever.
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(client_out_proto.closed, 5.0)
        if self.client_in is not None:
            self.client_in.close()


def _spawn_error(command: Sequence[str], exc: BaseException) -> str:
    name = command[0] if command else "''"
    if isinstance(exc, FileNotFoundError):
        return f"cannot start the server: {name}: command not found"
    if isinstance(exc, PermissionError):
        return f"cannot start the server: {name}: permission denied"
    if isinstance(exc, OSError) and os.path.isdir(name):
        return f"cannot start the server: {name}: is a directory"
    detail = getattr(exc, "strerror", None) or str(exc)
    return f"cannot start the server: {name}: {detail}"
