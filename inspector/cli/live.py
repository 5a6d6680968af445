"""Live analysis for a proxy: flow lines and spec flags while the traffic flows.

The analysis runs in a worker process (:mod:`mcpeek.inspector.cli.live_worker`)
that follows the capture the proxy writes, so that it never sits on the
relay's path. :class:`LiveChecks` starts it, turns each violation it reports
into a ``violation`` record in the capture and one line on stderr::

    mcpeek: ERROR result.result-type-missing tools/call id 4: result has no resultType  <url>

and, when the traffic is over, lets it finish reading and waits for its last
findings before the capture is closed. This module wires the core to the
rules, so it belongs to the CLI.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import TypeVar

import msgspec

from mcpeek.inspector.capture.writer import CaptureWriter
from mcpeek.inspector.children import python_module_argv
from mcpeek.inspector.proxy.console import Console
from mcpeek.inspector.records import Violation

FINISH_TIMEOUT = 10.0  # seconds the worker gets to catch up once the traffic is over (a client
# waiting for our exit should not wait long: lint recomputes anything missed)
PRINTED_PER_RULE = 10  # flags printed per rule; the rest go to the capture only
T = TypeVar("T")


class _Finding(msgspec.Struct):
    flow: str | None = None
    violation: dict[str, object] | None = None


class LiveChecks:
    def __init__(
        self,
        writer: CaptureWriter,
        say: Callable[[str], None],
        *,
        checks: bool,
        flows: bool,
        spec: str | None = None,
    ) -> None:
        self._writer = writer
        self._say = say
        self._args = [str(writer.path)]
        if flows:
            self._args.append("--flows")
        if not checks:
            self._args.append("--no-check")
        if spec:
            self._args += ["--spec", spec]
        self.active = checks or flows
        self.violations = 0
        self._printed: dict[str, int] = {}
        self._process: asyncio.subprocess.Process | None = None
        self._reader: asyncio.Task[None] | None = None
        self._decoder = msgspec.json.Decoder(_Finding)

    async def start(self) -> None:
        if not self.active:
            return
        if not self._writer.path.is_file():  # e.g. /dev/full: nothing a worker can follow
            self._say("live checks need a capture file; run mcpeek lint on a saved capture")
            return
        try:
            self._process = await asyncio.create_subprocess_exec(
                *python_module_argv("mcpeek.inspector.cli.live_worker", *self._args),
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
            )
        except OSError as exc:
            self._say(f"live checks unavailable: {exc}; run mcpeek lint on the capture")
            return
        self._reader = asyncio.get_running_loop().create_task(self._read())

    async def _read(self) -> None:
        assert self._process is not None and self._process.stdout is not None
        while line := await self._process.stdout.readline():
            try:
                finding = self._decoder.decode(line)
            except msgspec.MsgspecError:
                continue
            if finding.flow is not None:
                self._say(finding.flow)
            elif finding.violation is not None:
                self._report(finding.violation)

    def _report(self, item: dict[str, object]) -> None:
        from mcpeek.rules.engine import Reported, flag_line

        reported = msgspec.convert(item, Reported)
        self.violations += 1
        if not self._writer.closed and self._writer.error is None:
            # A failed write stays in writer.error, for the proxy to report once.
            with contextlib.suppress(OSError):
                self._writer.write(
                    Violation(
                        rule=reported.rule,
                        severity=reported.severity,
                        msgs=reported.msgs,
                        message=reported.message,
                        spec=reported.spec,
                    )
                )
        self._say(flag_line(reported))

    async def finish(self, timeout: float = FINISH_TIMEOUT) -> None:
        """The traffic is over and on disk: let the worker read the rest and report."""
        process = self._process
        if process is None or self._reader is None:
            return
        assert process.stdin is not None
        with contextlib.suppress(OSError):
            process.stdin.close()
        try:
            await asyncio.wait_for(asyncio.shield(self._reader), timeout)
            await asyncio.wait_for(process.wait(), 5)
        except TimeoutError:
            self._say("live checks did not finish in time; run mcpeek lint on the capture")
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            self._reader.cancel()
            await process.wait()

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
