"""Live analysis for a proxy: flow lines and spec flags while the traffic flows.

The analysis runs in a worker process (:mod:`mcpeek.inspector.cli.live_worker`)
that follows the capture the proxy writes, so that it never sits on the
relay's path. :class:`LiveChecks` starts it, turns each violation it reports
into a ``violation`` record in the capture and one line on stderr::

    mcpeek: ERROR result.result-type-missing tools/call id 4: result has no resultType  <url>

and, when the traffic is over, lets it catch up for a moment (FINISH_GRACE)
and takes its last findings before the capture is closed. The relay never
waits on the analysis: a worker still behind then is stopped, and one line
says how many records it did not check (``mcpeek lint`` checks them all).
Flags are printed up to PRINTED_PER_RULE per rule; a closing line per rule
counts the rest, which are in the capture all the same. This module wires
the core to the rules, so it belongs to the CLI.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, TypeVar

import msgspec

from mcpeek.inspector.capture.writer import CaptureWriter
from mcpeek.inspector.children import python_module_argv
from mcpeek.inspector.proxy.console import Console

if TYPE_CHECKING:
    from mcpeek.inspector.cli.live_protocol import WorkerLine
    from mcpeek.rules.engine import Reported

# Once the traffic is over, the worker gets this long to catch up: a client waits for
# our exit (the MCP SDKs give a server about 2 s before they kill it), and lint
# recomputes anything missed. Its start-up does not count: a short session would
# otherwise never be checked on a busy machine.
FINISH_GRACE = 1.0
START_TIMEOUT = 10.0  # seconds a worker may take to start (imports) before it is stopped
STOP_TIMEOUT = 1.0  # seconds a stopped worker gets to say how far it got, before SIGKILL
# What the proxy tells the worker on its stdin (see mcpeek.inspector.cli.live_worker).
DONE = b"done\n"  # the traffic is over: check the capture to its end
STOP = b"stop\n"  # stop now, say how far you got
# The capture stopped short (a write failed: a full disk): what the worker has not read
# never will be, so it judges no request unanswered for want of an answer the file lacks.
CUT = b"cut\n"
PRINTED_PER_RULE = 10  # flags printed per rule; the rest go to the capture only
T = TypeVar("T")


class LiveChecks:
    def __init__(
        self,
        writer: CaptureWriter,
        say: Callable[[str], None],
        *,
        checks: bool,
        flows: bool,
        spec: str | None = None,
        recorded: Callable[[], int] | None = None,
        slow: float | None = None,
    ) -> None:
        """``recorded`` counts the records the proxy has written (violations aside),
        so that a worker stopped early can be told how far behind it was. With
        ``flows``, a request in flight ``slow`` seconds gets a line at once."""
        self._writer = writer
        self._say = say
        self._recorded = recorded
        self._args = [str(writer.writing_path)]  # followed on after it is renamed
        if writer.replacing:  # (or opened by its new name, if later)
            self._args += ["--renamed-to", str(writer.path)]
        if flows:
            self._args.append("--flows")
            if slow is not None:
                self._args += ["--slow", repr(slow)]
        if not checks:
            self._args.append("--no-check")
        if spec:
            self._args += ["--spec", spec]
        self.active = checks or flows
        self.violations = 0
        self._printed: dict[str, int] = {}
        self._process: asyncio.subprocess.Process | None = None
        self._reader: asyncio.Task[None] | None = None
        self._ready: asyncio.Future[None] | None = None
        self._checked: int | None = None
        self._cut_told = False

    async def start(self) -> None:
        if not self.active:
            return
        if not self._writer.writing_path.is_file():  # e.g. /dev/full: nothing a worker can follow
            self._say("live checks need a capture file; run mcpeek lint on a saved capture")
            return
        # The worker's protocol carries the engine's findings, so it loads the rules:
        # here, before the relay starts, rather than at the first flag, mid-traffic;
        # and not at the top, so that a proxy without live checks never loads them.
        from mcpeek.inspector.cli.live_protocol import decoder

        decode = decoder().decode
        try:
            self._process = await asyncio.create_subprocess_exec(
                *python_module_argv("mcpeek.inspector.cli.live_worker", *self._args),
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                # Its own process group: the terminal's Ctrl-C (and a signal sent to
                # the proxy's group) never reaches it, not even mid-import, where it
                # would die with a traceback. The proxy stops it on every exit
                # (finish, abort), and it ends on its stdin's EOF if the proxy is killed.
                process_group=0,
            )
        except OSError as exc:
            self._say(f"live checks unavailable: {exc}; run mcpeek lint on the capture")
            return
        loop = asyncio.get_running_loop()
        self._ready = loop.create_future()
        self._reader = loop.create_task(self._read(self._ready, decode))
        if self._writer.error is not None:  # (it failed while the worker started)
            self._tell_cut()

    def capture_cut(self) -> None:
        """The capture stopped short (a write failed: a full disk), as whoever met the
        failure says at once: the worker then holds requests whose answers the client
        got but the file could not, which are nobody's fault. Before the worker runs,
        :meth:`finish` tells it (the writer keeps its error)."""
        self._tell_cut()

    def _tell_cut(self) -> None:
        process = self._process
        if process is not None and process.stdin is not None and not self._cut_told:
            self._cut_told = True
            self._tell(process.stdin, CUT)

    async def _read(
        self, ready: asyncio.Future[None], decode: Callable[[bytes], WorkerLine]
    ) -> None:
        from mcpeek.inspector.cli.live_protocol import Checked, FlowLine, Found, Ready

        assert self._process is not None and self._process.stdout is not None
        try:
            while line := await self._process.stdout.readline():
                try:
                    said = decode(line)
                except msgspec.MsgspecError:
                    continue  # not the worker's (a stray print): nothing to act on
                if type(said) is FlowLine:
                    self._say(said.line)
                elif type(said) is Found:
                    self._report(said.violation)
                elif type(said) is Checked:
                    self._checked = said.records
                elif type(said) is Ready and not ready.done():
                    ready.set_result(None)
        finally:
            if not ready.done():  # a worker that died at start is no longer awaited
                ready.set_result(None)

    def _report(self, reported: Reported) -> None:
        from mcpeek.rules.engine import flag_line

        self.violations += 1
        printed = self._printed[reported.rule] = self._printed.get(reported.rule, 0) + 1
        if not self._writer.closed and self._writer.error is None:
            try:
                self._writer.write(reported.record())
            except OSError:  # it stays in writer.error, for the proxy to report once
                self._tell_cut()
        if printed <= PRINTED_PER_RULE:
            self._say(flag_line(reported))

    async def finish(self, grace: float = FINISH_GRACE) -> None:
        """The traffic is over and on disk: the worker gets ``grace`` seconds (once it
        runs) to check the rest; if it is still behind then, it is stopped."""
        process, reader, ready = self._process, self._reader, self._ready
        if process is None or reader is None or ready is None:
            return
        assert process.stdin is not None
        if self._writer.error is not None:  # (met before the worker ran: not told yet)
            self._tell_cut()
        self._tell(process.stdin, DONE)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(ready), START_TIMEOUT)
        caught_up = await _ends_within(reader, grace)
        if not caught_up:
            self._tell(process.stdin, STOP)
        with contextlib.suppress(OSError):
            process.stdin.close()
        if not caught_up and not await _ends_within(reader, STOP_TIMEOUT):
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            reader.cancel()
        await process.wait()
        self._say_what_was_left(caught_up)

    @staticmethod
    def _tell(stdin: asyncio.StreamWriter, command: bytes) -> None:
        with contextlib.suppress(OSError, RuntimeError):  # a worker that died hears nothing
            stdin.write(command)

    def _say_what_was_left(self, caught_up: bool) -> None:
        for rule, count in self._printed.items():
            if count > PRINTED_PER_RULE:
                kept = (
                    "every one is in the capture"
                    if self._writer.error is None
                    else "the capture stopped short of some"
                )
                self._say(f"{rule}: {count - PRINTED_PER_RULE} more flags not printed ({kept})")
        if caught_up:
            return
        lint = f"run mcpeek lint {self._writer.path} to check it all"
        if self._checked is not None and self._recorded is not None:
            left = max(self._recorded() - self._checked, 0)
            self._say(
                f"live checks stopped {left} record{'s' if left != 1 else ''} before the end "
                f"of the capture (mcpeek does not wait for them); {lint}"
            )
        else:
            self._say(f"live checks stopped before the end of the capture; {lint}")

    async def abort(self) -> None:
        """The proxy failed: stop the worker without waiting for its findings."""
        process = self._process
        if process is None or process.returncode is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        await process.wait()
        if self._reader is not None:
            self._reader.cancel()


async def _ends_within(task: asyncio.Task[None], seconds: float) -> bool:
    done, _ = await asyncio.wait({task}, timeout=seconds)
    return bool(done)


async def record_while(live: LiveChecks, main: Callable[[], Awaitable[T]], console: Console) -> T:
    """Run a proxy's ``main`` with stderr written through the loop and the live
    checks beside it; when ``main`` is done (its records are on disk: the writer
    writes each at once), the checks get to finish reading before stderr goes
    back to plain writes."""
    await console.attach()
    try:
        await live.start()
        try:
            result = await main()
        except BaseException:
            await live.abort()  # the proxy did not run (e.g. its port was taken)
            raise
        await live.finish()
        return result
    finally:
        await console.detach()
