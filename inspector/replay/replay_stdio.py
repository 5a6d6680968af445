"""Replay over stdio: spawn the server and speak JSON-RPC lines with it.

Each outgoing message is one line on the server's stdin; each line the
server writes on stdout is one incoming message, whatever its length; its
stderr lines are kept as ``stderr`` records. At the end the server's stdin
is closed, and a server that does not exit within ``grace`` seconds gets
SIGTERM, then SIGKILL, like ``mcpeek stdio`` does. Everything is recorded
(spawn, messages both ways, stderr, EOFs, exit) for the session's capture.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Sequence

from mcpeek.inspector.records import Event, Msg, SeqRecord, Stderr, text_fields
from mcpeek.inspector.replay.replay_transport import Closed, Deliver, Outgoing, ReplayError

LINE_LIMIT = 1 << 30  # no practical cap on one message's size
Emit = Callable[[SeqRecord], None]


class StdioTransport:
    def __init__(self, command: Sequence[str], emit: Emit, *, grace: float = 2.0) -> None:
        self.command = list(command)
        self.emit = emit
        self.grace = grace
        self.exit_code: int | None = None
        self._process: asyncio.subprocess.Process | None = None
        self._readers: list[asyncio.Task[None]] = []
        self._closed: Closed = lambda _reason: None
        self._closing = False
        self.reason: str | None = None  # why the session ended early (the server's doing)
        self.stopped = False  # mcpeek had to SIGTERM/SIGKILL it at the end

    async def start(self, deliver: Deliver, closed: Closed) -> None:
        self._closed = closed
        try:
            process = await asyncio.create_subprocess_exec(
                *self.command,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                limit=LINE_LIMIT,
            )
        except OSError as exc:
            raise ReplayError(
                f"cannot start the server {self.command[0]!r}: {exc.strerror or exc}"
            ) from None
        self._process = process
        self.emit(Event(event="spawn", pid=process.pid))
        loop = asyncio.get_running_loop()
        self._readers = [
            loop.create_task(self._read_stdout(deliver)),
            loop.create_task(self._read_stderr()),
        ]

    async def _read_stdout(self, deliver: Deliver) -> None:
        assert self._process is not None and self._process.stdout is not None
        stdout = self._process.stdout
        try:
            while line := await stdout.readline():
                partial = not line.endswith(b"\n")
                data = line.rstrip(b"\n")
                raw, raw_b64 = text_fields(data)
                self.emit(Msg(dir="s2c", ch="stdio", raw=raw, raw_b64=raw_b64, partial=partial))
                if data.strip():
                    deliver(data)
        except Exception as exc:  # nobody awaits this task: end the session, say why
            self._went_away(
                f"mcpeek could not read the server's output ({type(exc).__name__}: {exc})"
            )
            return
        self.emit(Event(event="server-eof"))
        if not self._closing:  # not our doing: the server went away on its own
            self._went_away("the server closed its stdout")

    async def _read_stderr(self) -> None:
        assert self._process is not None and self._process.stderr is not None
        while line := await self._process.stderr.readline():
            raw, raw_b64 = text_fields(line.rstrip(b"\n"))
            self.emit(Stderr(raw=raw, raw_b64=raw_b64))

    async def send(self, item: Outgoing) -> None:
        process = self._process
        if item.data is None or process is None or process.stdin is None:
            return  # a bare HTTP request (GET stream, DELETE) has no stdio counterpart
        raw, raw_b64 = text_fields(item.data)
        self.emit(Msg(dir="c2s", ch="stdio", raw=raw, raw_b64=raw_b64))
        try:
            process.stdin.write(item.data + b"\n")
            await process.stdin.drain()
        except (BrokenPipeError, ConnectionResetError):
            self._went_away("the server closed its stdin")

    def _went_away(self, reason: str) -> None:
        if self.reason is None:
            self.reason = reason
        self._closed(reason)

    async def close(self) -> None:
        process = self._process
        if process is None:
            return
        self._closing = True
        if process.stdin is not None:
            with contextlib.suppress(OSError):
                process.stdin.close()
            self.emit(Event(event="client-eof"))
        for stop in (None, process.terminate, process.kill):
            if stop is not None:
                with contextlib.suppress(ProcessLookupError):
                    stop()
                    self.stopped = True
            try:
                await asyncio.wait_for(process.wait(), self.grace)
                break
            except TimeoutError:
                continue
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.gather(*self._readers, return_exceptions=True), 5)
        code = process.returncode
        self.exit_code = code
        if code is not None and code < 0:
            self.emit(Event(event="exit", signal=-code))
        else:
            self.emit(Event(event="exit", code=code))

    def describe_exit(self, when: str = "") -> str:
        """How the server went away, for the report: ``when`` (e.g. " before answering
        anything") follows the cause. A server that mcpeek had to stop is not said to
        have exited by the signal mcpeek sent it."""
        process = self._process
        if self.stopped:
            return f"{self.reason or 'the server stopped answering'}{when}; mcpeek stopped it"
        if process is None or process.returncode is None:
            return f"the server stopped answering{when}"
        code = process.returncode
        how = f"signal {-code}" if code < 0 else f"code {code}"
        return f"the server exited ({how}){when}"
