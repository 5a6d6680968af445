"""When the stdio wrapper closes what, signals whom, and is done: a sans-IO state machine.

:class:`StdioLifecycle` is fed events (the client's EOF, a pipe of either side
gone, the server's exit, a signal, the clock) and answers each with commands
for the asyncio shell in :mod:`mcpeek.inspector.proxy.stdio_shell` to carry out. It does
no I/O and reads no clock, so every ending can be tested as a table of
events and expected commands.

The rules are those of a transparent wrapper: whatever the client does to
mcpeek reaches the server as if mcpeek were not there (EOF on its stdin,
EPIPE on its stdout or stderr), and mcpeek is done once the server has
exited and its pipes are drained. After the client's EOF the server gets
``grace`` seconds, then SIGTERM, ``grace`` more, then SIGKILL; time it spends
blocked on output a live client is slow to read is the client's, and does not
count. After the exit, pipes a grandchild keeps open are given up once
nothing came for ``drain_idle`` seconds (unless, again, a live client is slow).
"""

from __future__ import annotations

import signal
from dataclasses import dataclass

STDOUT, STDERR = 1, 2


@dataclass(frozen=True)
class CloseServerStdin:
    """The client's EOF, passed on (what is buffered is written first)."""


@dataclass(frozen=True)
class CloseServerPipe:
    """Stop reading the server's stdout or stderr: it gets EPIPE, or we stop draining."""

    fd: int


@dataclass(frozen=True)
class CloseClientStdout:
    """The server's stdout ended: so does ours (after what is buffered)."""


@dataclass(frozen=True)
class SignalServer:
    signal: int


@dataclass(frozen=True)
class Note:
    """A line for the capture, saying why mcpeek acts."""

    message: str


Command = CloseServerStdin | CloseServerPipe | CloseClientStdout | SignalServer | Note
ESCALATION = (signal.SIGTERM, signal.SIGKILL)


def exit_code(returncode: int) -> int:
    """The wrapper's exit code for the server's: 128+N for death by signal N, as a shell."""
    return 128 - returncode if returncode < 0 else returncode


class StdioLifecycle:
    def __init__(self, grace: float, drain_idle: float = 2.0) -> None:
        self.grace = grace
        self.drain_idle = drain_idle
        self.open_server_pipes = {STDOUT, STDERR}
        self.exited = False
        self._client_stdout_open = True
        self._stdout_paused = False  # reading the server's stdout waits for the client
        self._last_server_activity = 0.0
        self._escalation: list[int] = []  # the signals still to send, in order
        self._free_wait = 0.0  # grace used up so far (time the client did not hold)
        self._last_tick: float | None = None

    @property
    def done(self) -> bool:
        """The server has exited and its pipes are read to their end (or given up)."""
        return self.exited and not self.open_server_pipes

    def _client_holds_up_the_server(self) -> bool:
        # A pause flag describes two live pipes: once either is gone, it does not count.
        return self._stdout_paused and self._client_stdout_open and STDOUT in self.open_server_pipes

    # -- events from the client ---------------------------------------------------
    def client_eof(self, now: float) -> list[Command]:
        if not self.exited:
            self._escalation = list(ESCALATION)
            self._free_wait, self._last_tick = 0.0, now
        return [CloseServerStdin()]

    def client_stdout_lost(self) -> list[Command]:
        """The client closed our stdout (it went away): the server finds out by EPIPE,
        as without mcpeek, instead of us reading and dropping its output."""
        self._client_stdout_open = False
        commands: list[Command] = [Note("the client closed mcpeek's stdout")]
        if STDOUT in self.open_server_pipes:
            commands.append(CloseServerPipe(STDOUT))
        return commands

    def client_stderr_lost(self) -> list[Command]:
        """Our stderr's reader is gone: a server blocked on its stderr must get EPIPE,
        not wait for ever on a pipe we stopped reading because ours was full."""
        if STDERR not in self.open_server_pipes:
            return []
        return [Note("the client closed mcpeek's stderr"), CloseServerPipe(STDERR)]

    def signal_received(self, sig: int) -> list[Command]:
        return [Note(f"forwarding {signal.Signals(sig).name} to the server"), SignalServer(sig)]

    # -- events from the server ---------------------------------------------------
    def server_activity(self, now: float) -> None:
        """Output from the server (stdout or stderr): the idle clock starts again."""
        self._last_server_activity = now

    def stdout_paused(self, paused: bool, now: float) -> None:
        self._use_grace(now)  # the time so far counts as it was, paused or not
        self._stdout_paused = paused
        self._last_server_activity = now  # a pause is the client's, not the server's idleness

    def server_pipe_closed(self, fd: int) -> list[Command]:
        if fd not in self.open_server_pipes:
            return []
        self.open_server_pipes.discard(fd)
        return [CloseClientStdout()] if fd == STDOUT else []

    def server_exited(self, now: float) -> None:
        self.exited = True
        self._escalation = []
        # What it wrote last may still be in the pipes: the idle clock starts no earlier.
        self._last_server_activity = max(self._last_server_activity, now)

    # -- the clock -----------------------------------------------------------------
    def tick(self, now: float) -> list[Command]:
        """Called often (every 0.1 s): escalation before the exit, draining after."""
        if self.exited:
            return self._give_up_idle_pipes(now)
        if not self._escalation:
            return []
        self._use_grace(now)
        if self._free_wait < self.grace:
            return []
        sig = self._escalation.pop(0)
        self._free_wait = 0.0
        return [Note(f"sending {signal.Signals(sig).name} to the server"), SignalServer(sig)]

    def _use_grace(self, now: float) -> None:
        if self._escalation and self._last_tick is not None:
            if not self._client_holds_up_the_server():
                self._free_wait += now - self._last_tick
            self._last_tick = now

    def _give_up_idle_pipes(self, now: float) -> list[Command]:
        idle = now - self._last_server_activity
        if self.done or self._client_holds_up_the_server() or idle <= self.drain_idle:
            return []
        return [CloseServerPipe(fd) for fd in sorted(self.open_server_pipes)]
