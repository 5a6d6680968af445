"""``mcp_record``: a test's MCP traffic through mcpeek, recorded or replayed VCR-style."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from mcpeek.inspector.pytest_plugin.checks import (
    at_least,
    describe,
    describe_misses,
    lint_capture,
    summary,
)
from mcpeek.inspector.pytest_plugin.record_config import numbered, read_options
from mcpeek.inspector.pytest_plugin.recordings import HttpRecording, StdioRecording
from mcpeek.inspector.pytest_plugin.runs import HttpMock, PluginError, StdioMock

if TYPE_CHECKING:
    import pytest

    from mcpeek.rules.engine import Reported


@dataclass
class _Use:
    number: int
    capture: Path  # where the test's capture is (replay) or goes (record)
    run: StdioMock | HttpMock | StdioRecording | HttpRecording
    reported: bool = False

    @property
    def recording(self) -> bool:
        return isinstance(self.run, (StdioRecording, HttpRecording))


class McpRecord:
    """The ``mcp_record`` fixture (see docs/pytest-plugin.md)."""

    def __init__(self, item: pytest.Item, workdir: Path) -> None:
        options = read_options(item)
        self.mode = options.mode
        self.fail_on = options.fail_on
        self.timing = options.timing
        self.ignore = options.ignore
        self.ignore_rules = options.ignore_rules
        self.base = options.base
        self._workdir = workdir
        self._uses: list[_Use] = []
        self.violations: list[Reported] = []
        # once: a test whose first capture exists is replayed as a whole.
        self._once_replays = numbered(self.base, 1).exists()
        if self.mode == "none" and not numbered(self.base, 1).exists():
            raise PluginError(self._missing(numbered(self.base, 1)))

    def __repr__(self) -> str:
        return f"<mcp_record {self.mode} {self.capture_path()}>"

    # -- the API a test calls ---------------------------------------------------------
    def capture_path(self, number: int = 1) -> Path:
        """Where the test's ``number``-th capture is (``.stdio``/``.http`` calls count)."""
        return numbered(self.base, number)

    @property
    def captures(self) -> list[Path]:
        """The captures this test used so far (recorded ones exist once the test passed)."""
        return [use.capture for use in self._uses]

    @property
    def replaying(self) -> bool:
        """Whether the next ``.stdio()``/``.http()`` call replays a capture."""
        try:
            return self._replays(self.capture_path(len(self._uses) + 1))
        except PluginError:
            return True

    def stdio(self, command: Sequence[str]) -> list[str]:
        """The argv to spawn instead of the stdio server ``command``: ``mcpeek stdio -w
        CAPTURE -- command`` when recording, a mock of the capture when replaying."""
        number = len(self._uses) + 1
        capture = self.capture_path(number)
        run: StdioMock | StdioRecording
        with _as_failure():
            run = self._stdio(command, number, capture)
        self._uses.append(_Use(number, capture, run))
        return list(run.command)

    def _stdio(
        self, command: Sequence[str], number: int, capture: Path
    ) -> StdioMock | StdioRecording:
        run: StdioMock | StdioRecording
        if self._replays(capture):
            session = self._session(number)
            run = StdioMock(capture, session, ignore=self.ignore, timing=self.timing)
        else:
            capture.parent.mkdir(parents=True, exist_ok=True)
            run = StdioRecording(command, numbered(self.base, number, "recording"))
        return run

    def http(self, upstream_url: str) -> str:
        """The URL to use instead of ``upstream_url``: ``mcpeek http`` in front of it when
        recording, a mock of the capture (on the same path) when replaying."""
        number = len(self._uses) + 1
        capture = self.capture_path(number)
        run: HttpMock | HttpRecording
        with _as_failure():
            run = self._http(upstream_url, number, capture)
        self._uses.append(_Use(number, capture, run))
        return run.url

    def _http(self, upstream_url: str, number: int, capture: Path) -> HttpMock | HttpRecording:
        from urllib.parse import urlsplit

        run: HttpMock | HttpRecording
        if self._replays(capture):
            parts = urlsplit(upstream_url)
            path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
            session = self._session(number)
            run = HttpMock(capture, session, ignore=self.ignore, timing=self.timing, path=path)
        else:
            capture.parent.mkdir(parents=True, exist_ok=True)
            self._workdir.mkdir(parents=True, exist_ok=True)
            log = self._workdir / f"mcpeek-http.{number}.log"
            run = HttpRecording(upstream_url, numbered(self.base, number, "recording"), log)
        return run

    # -- modes ---------------------------------------------------------------------------
    def _replays(self, capture: Path) -> bool:
        exists = capture.exists()
        if self.mode == "all":
            return False
        if self.mode == "new":
            return exists
        if self.mode == "none" or self._once_replays:
            if not exists:
                raise PluginError(self._missing(capture))
            return True
        return False

    def _missing(self, capture: Path) -> str:
        if self.mode == "none":
            return (
                f"mcp_record: no capture {capture} to replay, and the record mode is 'none' "
                "(replay only). Record it with --mcpeek-record=once (or new, all)."
            )
        return (
            f"mcp_record: no capture {capture}, while this test's first capture exists, so "
            "record mode 'once' replays the test and records nothing. Run it with "
            "--mcpeek-record=new to record the missing capture, or all to record all again."
        )

    def _session(self, number: int) -> Path:
        self._workdir.mkdir(parents=True, exist_ok=True)
        return self._workdir / f"{self.base.name}.{number}.session.jsonl"

    # -- after the test -------------------------------------------------------------------
    def settle(self, timeout: float) -> bool:
        """Wait (at most ``timeout``) for the traffic to end; HTTP runs are stopped."""
        return all([use.run.settle(timeout) for use in self._uses if not use.reported])

    def report(self, test_failed: bool) -> list[str]:
        """Check every finished use not checked yet; save recordings (see the docs)."""
        problems: list[str] = []
        for use in self._uses:
            if use.reported or not use.run.settle(0):
                continue
            use.reported = True
            if not use.run.started:
                continue
            try:
                if use.recording:
                    problems += self._recorded(use, test_failed)
                else:
                    problems += self._replayed(use)
            except Exception as exc:  # an unreadable capture, a full disk
                problems.append(f"mcp_record: {use.capture}: {type(exc).__name__}: {exc}")
        return problems

    def _recorded(self, use: _Use, test_failed: bool) -> list[str]:
        run = use.run
        assert isinstance(run, (StdioRecording, HttpRecording))
        problems = []
        if isinstance(run, HttpRecording) and run.exit_code not in (0, None):
            problems.append(f"mcpeek http exited with code {run.exit_code}:\n{run.stderr_tail()}")
        found, _ = lint_capture(run.recording, ignore_rules=self.ignore_rules)
        self.violations += found
        failing = at_least(found, self.fail_on)
        failed_path = numbered(self.base, use.number, "failed")
        keep = not (test_failed or failing or problems)
        target = use.capture if keep else failed_path
        os.replace(run.recording, target)
        if keep:
            failed_path.unlink(missing_ok=True)
        if failing:
            problems.append(
                f"mcpeek: the MCP traffic of this test broke {len(failing)} rule(s) at or "
                f"above {self.fail_on} ({summary(failing)}):\n{describe(failing)}"
            )
        if not keep:
            note = (
                f"capture: {target} (not saved as {use.capture.name}: the next run records again)"
            )
            problems.append(note)
        return problems

    def _replayed(self, use: _Use) -> list[str]:
        run = use.run
        assert isinstance(run, (StdioMock, HttpMock))
        found, _, misses = run.results()
        if self.ignore_rules:
            found = [v for v in found if v.rule not in self.ignore_rules]
        self.violations += found
        failing = at_least(found, self.fail_on)
        problems = []
        if misses:
            problems.append(
                f"mcpeek: replaying {use.capture} (record mode {self.mode}): the client sent "
                f"{len(misses)} request(s) the capture has no answer for:\n"
                f"{describe_misses(misses)}\nThe client or the server changed since it was "
                "recorded: record it again with --mcpeek-record=all."
            )
        if failing:
            problems.append(
                f"mcpeek: the MCP traffic of this test, replayed from {use.capture}, broke "
                f"{len(failing)} rule(s) at or above {self.fail_on} ({summary(failing)}):\n"
                f"{describe(failing)}"
            )
        if problems:
            problems.append(f"session capture: {run.session_capture}")
        return problems

    def unfinished(self) -> list[str]:
        """What never ended (stdio sessions the client did not close): reported once, and a
        partial recording is kept as ``.failed.jsonl``."""
        problems = []
        for use in self._uses:
            if use.reported:
                continue
            use.reported = True
            text = (
                f"mcp_record: the stdio session of {use.capture.name} through mcpeek did not "
                "end: the client under test must close the server it spawned (its stdin) "
                "before the test's teardown"
            )
            if isinstance(use.run, StdioRecording) and use.run.started:
                failed_path = numbered(self.base, use.number, "failed")
                os.replace(use.run.recording, failed_path)
                text += f"\ncapture so far: {failed_path}"
            problems.append(text)
        return problems

    def close(self) -> None:
        for use in self._uses:
            use.run.close()


@contextmanager
def _as_failure() -> Iterator[None]:
    """A :class:`PluginError` fails the test with its message alone (no traceback)."""
    import pytest

    error = None
    try:
        yield
    except PluginError as exc:
        error = str(exc)
    if error is not None:  # outside the except: no "during handling" chain in the report
        pytest.fail(error, pytrace=False)
