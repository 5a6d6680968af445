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
stdout mcpeek closes its own; when the client goes away, the server gets
EPIPE on its stdout and stderr; mcpeek exits with the server's code (128+N for
death by signal N). Those decisions are :mod:`mcpeek.inspector.proxy.lifecycle`'s
(sans-IO, tested as tables); :mod:`mcpeek.inspector.proxy.stdio_shell` carries
them out, and this module spawns the server and moves the bytes.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
from collections.abc import Callable, Sequence
from typing import Any

from mcpeek.inspector.proxy.console import Console
from mcpeek.inspector.proxy.lifecycle import exit_code
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
from mcpeek.inspector.proxy.stdio_ends import ClientIn, ClientOut, ServerSide
from mcpeek.inspector.proxy.stdio_shell import LifecycleShell
from mcpeek.inspector.proxy.tap import StdioTap

FORWARDED_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
SPAWN_FAILED = 2


class StdioRelay(LifecycleShell):
    """One run of the wrapper. ``tap`` receives what was forwarded.

    This class spawns the server, wires the pipes and forwards bytes; what
    happens to the pipes goes to the lifecycle through its base,
    :class:`~mcpeek.inspector.proxy.stdio_shell.LifecycleShell`.
    """

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
        on_spawned: Callable[[], None] | None = None,  # the run has started (-w --force)
    ) -> None:
        super().__init__(tap, console, grace=grace, on_tap_error=on_tap_error)
        self.command = list(command)
        self.stdin_fd = stdin_fd
        self.stdout_fd = stdout_fd
        self.on_spawned = on_spawned
        self.spawned = False
        self.undelivered = 0  # bytes of server output the client was gone for
        self.unsent = 0  # bytes of client input the server's stdin was closed for

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
        self.lifecycle.server_activity(asyncio.get_running_loop().time())
        if self._client_out is not None and not self._client_out.is_closing():
            self._client_out.write(data)
        else:
            self.undelivered += len(data)
        self._observe(self.tap.data, "s2c", data)

    def from_server_stderr(self, data: bytes) -> None:
        self.lifecycle.server_activity(asyncio.get_running_loop().time())
        self.console.passthrough(data)
        self._observe(self.tap.stderr, data)

    # -- flow control ---------------------------------------------------------
    def pause(self, transport: Any) -> None:
        if transport is not None and not transport.is_closing():
            transport.pause_reading()
            if transport is self.server_out:
                self.lifecycle.stdout_paused(True, asyncio.get_running_loop().time())

    def resume(self, transport: Any) -> None:
        if transport is not None and not transport.is_closing():
            transport.resume_reading()
            if transport is self.server_out:
                self.lifecycle.stdout_paused(False, asyncio.get_running_loop().time())

    # -- the run --------------------------------------------------------------
    async def run(self) -> int:
        widen_pipe(self.stdin_fd)
        widen_pipe(self.stdout_fd)
        modes = keep_blocking_modes((self.stdin_fd, self.stdout_fd))
        try:
            return await self._run()
        finally:
            restore_blocking_modes(modes)

    async def _run(self) -> int:
        loop = asyncio.get_running_loop()
        self._done = loop.create_future()
        # From the start: a signal that comes while the server is being started is
        # forwarded once it runs, where mcpeek died of it and left the server running.
        for sig in FORWARDED_SIGNALS:
            loop.add_signal_handler(sig, self._forward_signal, sig)
        try:
            return await self._spawn_and_relay(loop)
        finally:
            for sig in FORWARDED_SIGNALS:
                loop.remove_signal_handler(sig)

    async def _spawn_and_relay(self, loop: asyncio.AbstractEventLoop) -> int:
        # The client's stdout is connected before the server starts: a server that
        # writes at once (its output read as soon as it runs) has somewhere to write
        # to, where its first bytes were counted as "the client went away".
        client_out_proto = ClientOut(self)
        self._client_out = await connect_writer(loop, self.stdout_fd, lambda: client_out_proto)
        try:
            transport, _ = await loop.subprocess_exec(
                lambda: ServerSide(self),
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
            self._client_out.close()  # (not the fd: the writer never closes it)
            return SPAWN_FAILED
        self.server_started(transport)
        self.spawned = True
        try:
            if self.on_spawned is not None:
                self.on_spawned()
            return await self._relay(transport, client_out_proto)
        except BaseException as exc:
            self._signal_server(signal.SIGKILL)  # never leave the server orphaned
            if isinstance(exc, Exception):  # (not a cancellation: time to reap it)
                await _reaped(transport)
            raise
        finally:
            transport.close()

    async def _relay(
        self, transport: asyncio.SubprocessTransport, client_out_proto: ClientOut
    ) -> int:
        self._server_in = transport.get_pipe_transport(0)
        self.server_out = transport.get_pipe_transport(1)
        for pipe in (self._server_in, self.server_out):
            widen_transport_pipe(pipe)
        widen_reads(self.server_out)
        self._observe(self.tap.event, "spawn", pid=transport.get_pid())
        server_err = self._server_err = transport.get_pipe_transport(2)
        # A stderr nobody drains slows the server's stderr, as without mcpeek; it
        # must never stall the relay of stdin and stdout.
        self.console.follow_backpressure(
            lambda: self.pause(server_err), lambda: self.resume(server_err), self.client_err_lost
        )
        return await self._relay_client(transport, client_out_proto)

    async def _relay_client(
        self, transport: asyncio.SubprocessTransport, client_out_proto: ClientOut
    ) -> int:
        loop = asyncio.get_running_loop()
        self.client_in = await connect_reader(loop, self.stdin_fd, lambda: ClientIn(self))
        widen_reads(self.client_in)
        ticker = loop.create_task(self._tick())
        try:
            await self._done  # type: ignore[misc]
        finally:
            for sig in FORWARDED_SIGNALS:  # (the client's last bytes drain without them)
                loop.remove_signal_handler(sig)
            ticker.cancel()
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
        return exit_code(code)

    async def _close_client(self, client_out_proto: ClientOut) -> None:
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


async def _reaped(transport: asyncio.SubprocessTransport, seconds: float = 2.0) -> None:
    """Wait until ``transport``'s process is reaped, ``seconds`` at most: the loop
    that started it must not close before (asyncio would warn on stderr)."""
    deadline = asyncio.get_running_loop().time() + seconds
    while transport.get_returncode() is None and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(0.01)
