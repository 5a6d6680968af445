"""The things a test's MCP traffic goes through: what they share, and the mock servers.

The recording proxies are in :mod:`~mcpeek.inspector.pytest_plugin.recordings`.

- :class:`StdioMock` — ``mcpeek serve CAPTURE -w SESSION`` as a command line the
  client under test spawns (so the plugin does not own the process: it knows the
  session ended when the session capture holds its ``client-eof`` event);
- :class:`HttpMock` — the mock on a free loopback port, in a thread of this process;
- :class:`~mcpeek.inspector.pytest_plugin.recordings.StdioRecording` —
  ``mcpeek stdio -w FILE -- CMD``, spawned by the client; done when the capture
  holds the ``exit`` event and stopped growing;
- :class:`~mcpeek.inspector.pytest_plugin.recordings.HttpRecording` —
  ``mcpeek http --no-tui`` on a free loopback port, a subprocess of the plugin,
  stopped with SIGTERM.

Each has ``settle(timeout) -> bool`` (is its traffic over, waiting at most
``timeout`` seconds; HTTP ones are stopped) and ``close()`` (stop whatever still runs).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from mcpeek.inspector.children import mcpeek_argv

if TYPE_CHECKING:
    from mcpeek.inspector.replay.mock import MockServer
    from mcpeek.inspector.replay.serving import RunningHttp
    from mcpeek.rules.engine import Reported

Timing = Literal["recorded", "fast"]
POLL = 0.05
START_TIMEOUT = 30.0
STOP_TIMEOUT = 10.0
TAIL = 1 << 16


class PluginError(Exception):
    """A problem the test's author must fix (bad path, bad capture, proxy that would not
    start); ``str()`` says what and how."""


def mcpeek_command(*args: str) -> list[str]:
    """mcpeek's own command line, run by this interpreter (as ``stdio_command`` does)."""
    return mcpeek_argv(*args)


def load_mock(capture: Path, ignore: Sequence[str], timing: Timing) -> MockServer:
    from mcpeek.inspector.capture.reader import CaptureError
    from mcpeek.inspector.replay.canonical import PointerError
    from mcpeek.inspector.replay.mock import MockServer, ServeError

    try:
        return MockServer.from_capture(capture, ignore=ignore, timing=timing)
    except PointerError as exc:
        raise PluginError(f"ignore: {exc}") from None
    except (CaptureError, ServeError, OSError) as exc:
        raise PluginError(f"cannot serve {capture}: {exc}") from None


def has_event(path: Path, name: str) -> bool:
    """Whether the last complete lines of a capture hold the event ``name``."""
    try:
        with path.open("rb") as f:
            size = f.seek(0, os.SEEK_END)
            f.seek(max(0, size - TAIL))
            tail = f.read()
    except FileNotFoundError:
        return False
    needle = f'"event":"{name}"'.encode()
    for line in reversed(tail.split(b"\n")[:-1]):  # complete lines only
        if b'"k":"event"' in line and needle in line:
            try:
                if json.loads(line).get("event") == name:
                    return True
            except ValueError:
                continue
    return False


def wait_until(done: Callable[[], bool], timeout: float) -> bool:
    """Poll ``done`` until it is true (True) or ``timeout`` seconds passed (False)."""
    deadline = time.monotonic() + timeout
    while True:
        if done():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(POLL)


class StdioMock:
    transport = "stdio"

    def __init__(
        self, capture: Path, session_capture: Path, *, ignore: Sequence[str], timing: Timing
    ) -> None:
        from mcpeek.inspector.replay.serving import stdio_command

        self.capture = capture
        self.session_capture = session_capture
        self.server = load_mock(capture, ignore, timing)
        options = ["--timing", timing, "-w", str(session_capture), "--force"]
        for pointer in ignore:
            options += ["--ignore", pointer]
        self.command = stdio_command(str(capture), *options)
        session_capture.unlink(missing_ok=True)
        self._results: tuple[list[Reported], dict[int, str], list[str]] | None = None

    @property
    def started(self) -> bool:
        return self.session_capture.exists()

    def ended(self) -> bool:
        return not self.started or has_event(self.session_capture, "client-eof")

    def settle(self, timeout: float) -> bool:
        return wait_until(self.ended, timeout)

    def results(self) -> tuple[list[Reported], dict[int, str], list[str]]:
        """(every violation, directions by seq, misses) of the ended session."""
        if self._results is None:
            from mcpeek.inspector.pytest_plugin.checks import lint_capture, stdio_misses

            if not self.started:
                return [], {}, []
            found, directions = lint_capture(self.session_capture)
            self._results = (found, directions, stdio_misses(self.server, self.session_capture))
        return self._results

    def close(self) -> None:
        """The process is the client's: nothing to stop."""


class HttpMock:
    transport = "http"

    def __init__(
        self,
        capture: Path,
        session_capture: Path,
        *,
        ignore: Sequence[str],
        timing: Timing,
        path: str = "/mcp",
    ) -> None:
        from mcpeek.inspector.capture.writer import CaptureWriter
        from mcpeek.inspector.replay.serving import start_http
        from mcpeek.inspector.replay.tape import Tape
        from mcpeek.rules.engine import RuleEngine

        self.capture = capture
        self.session_capture = session_capture
        self.found: list[Reported] = []
        server = load_mock(capture, ignore, timing)
        writer = CaptureWriter(session_capture, transport="http", target=str(capture), force=True)
        self.tape = Tape(transport="http", writer=writer, listeners=[RuleEngine(self.found.append)])
        try:
            self.running: RunningHttp = start_http(server, tape=self.tape)
        except BaseException:
            self.tape.close()
            raise
        self.url = self.running.url.removesuffix("/mcp") + path  # the mock answers any path
        self.stopped = False

    started = True

    def settle(self, timeout: float) -> bool:
        self.stop()
        return True

    def stop(self) -> None:
        if not self.stopped:
            self.stopped = True
            self.running.stop()

    def results(self) -> tuple[list[Reported], dict[int, str], list[str]]:
        directions = {
            v.msgs[-1]: d
            for v in self.found
            if v.msgs and (d := self.tape.direction(v.msgs[-1])) is not None
        }
        return list(self.found), directions, self.running.session_misses

    def close(self) -> None:
        self.stop()
