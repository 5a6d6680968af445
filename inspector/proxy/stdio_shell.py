"""The asyncio shell around the stdio lifecycle: what happens to the pipes and the
processes goes in, the commands :class:`~mcpeek.inspector.proxy.lifecycle.StdioLifecycle`
answers with come out and are carried out here.

The decisions (grace periods, escalation, which pipe closes when) are the
lifecycle's, sans-IO and tested as tables; the bytes are the relay's
(:class:`~mcpeek.inspector.proxy.stdio.StdioRelay`, which builds on this class).
This class holds the ends both share and turns events into commands.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Callable
from typing import Any

from mcpeek.inspector.proxy.console import Console
from mcpeek.inspector.proxy.lifecycle import (
    STDERR,
    STDOUT,
    CloseClientStdout,
    CloseServerPipe,
    CloseServerStdin,
    Command,
    Note,
    SignalServer,
    StdioLifecycle,
)
from mcpeek.inspector.proxy.stdio_ends import Writable
from mcpeek.inspector.proxy.tap import StdioTap

TICK = 0.1  # seconds between looks at the clock: escalation and draining


class LifecycleShell:
    """The pipe ends, the server process and the lifecycle that decides about them."""

    def __init__(
        self,
        tap: StdioTap,
        console: Console,
        *,
        grace: float,
        on_tap_error: Callable[[BaseException], None] | None,
    ) -> None:
        self.tap = tap
        self.console = console
        self.grace = grace
        self.on_tap_error = on_tap_error
        self.lifecycle = StdioLifecycle(grace)
        self.client_in: Any = None
        self.server_out: Any = None
        self._client_out: Writable | None = None
        self._server_in: Any = None
        self._server_err: Any = None
        self._process: asyncio.SubprocessTransport | None = None
        self._unsent_signal: int | None = None  # came before the server ran: sent once it does
        self._done: asyncio.Future[None] | None = None
        self._client_eof_seen = False
        self._closing_client_out = False  # we closed it (vs. the client going away)
        self._closing_client_in = False  # we closed it (vs. the client's EOF)

    def _observe(self, fn: Callable[..., None], *args: Any, **kwargs: Any) -> None:
        try:
            fn(*args, **kwargs)
        except Exception as exc:  # observation must never stop the relay
            if self.on_tap_error is not None:
                self.on_tap_error(exc)

    # -- events, passed to the lifecycle ---------------------------------------
    def client_out_lost(self) -> None:
        if not self._closing_client_out:  # the client went away, we did not close it
            self._carry_out(self.lifecycle.client_stdout_lost())

    def client_err_lost(self) -> None:
        self._carry_out(self.lifecycle.client_stderr_lost())

    def client_eof(self) -> None:
        if self._client_eof_seen:
            return
        self._client_eof_seen = True
        self._observe(self.tap.eof, "c2s")
        if self._closing_client_in:
            return  # mcpeek is done and stops reading: the client sent no EOF
        self._observe(self.tap.event, "client-eof")
        self._carry_out(self.lifecycle.client_eof(asyncio.get_running_loop().time()))

    def server_pipe_closed(self, fd: int) -> None:
        if fd not in self.lifecycle.open_server_pipes:
            return  # given up while draining, now closed for good: already told
        if fd == STDOUT:
            self._observe(self.tap.eof, "s2c")
            self._observe(self.tap.event, "server-eof")
        elif fd == STDERR:
            self._observe(self.tap.eof, "stderr")
        self._carry_out(self.lifecycle.server_pipe_closed(fd))

    def server_exited(self) -> None:
        self.lifecycle.server_exited(asyncio.get_running_loop().time())
        self._check_done()

    def server_started(self, process: asyncio.SubprocessTransport) -> None:
        """The server runs: a signal that came while it was being started reaches it now."""
        self._process = process
        if self._unsent_signal is not None:
            self._signal_server(self._unsent_signal)

    def _forward_signal(self, sig: int) -> None:
        self._carry_out(self.lifecycle.signal_received(sig))

    async def _tick(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(TICK)
            self._carry_out(self.lifecycle.tick(loop.time()))

    # -- commands, carried out --------------------------------------------------
    def _carry_out(self, commands: list[Command]) -> None:
        for command in commands:
            if isinstance(command, Note):
                self._observe(self.tap.event, "note", message=command.message)
            elif isinstance(command, CloseServerStdin):
                if self._server_in is not None:
                    self._server_in.close()  # flushes what is buffered, then closes
            elif isinstance(command, CloseServerPipe):
                pipe = self.server_out if command.fd == STDOUT else self._server_err
                if pipe is not None and not pipe.is_closing():
                    pipe.close()
                self.server_pipe_closed(command.fd)
            elif isinstance(command, CloseClientStdout):
                if self._client_out is not None:
                    self._closing_client_out = True
                    self._client_out.close()
            elif isinstance(command, SignalServer):
                self._signal_server(command.signal)
        self._check_done()

    def _check_done(self) -> None:
        if self.lifecycle.done and self._done is not None and not self._done.done():
            self._done.set_result(None)

    def _signal_server(self, sig: int) -> None:
        if self._process is None:
            self._unsent_signal = sig  # (see server_started)
            return
        if self._process.get_returncode() is not None:
            return
        pid = self._process.get_pid()
        try:
            os.killpg(pid, sig)
        except (ProcessLookupError, PermissionError):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)
