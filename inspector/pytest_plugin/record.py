"""``mcp_record``: a test's MCP traffic through mcpeek, recorded or replayed VCR-style."""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcpeek.inspector.pytest_plugin.checks import (
    LEVELS,
    at_least,
    check_rule_ids,
    describe,
    describe_misses,
    lint_capture,
    summary,
)
from mcpeek.inspector.pytest_plugin.runs import (
    HttpMock,
    HttpRecording,
    PluginError,
    StdioMock,
    StdioRecording,
    Timing,
)

if TYPE_CHECKING:
    import pytest

    from mcpeek.rules.engine import Reported

RECORD_MODES = ("once", "new", "none", "all")
MARKER_OPTIONS = ("fail_on", "capture_dir", "name", "mode", "ignore", "ignore_rules", "timing")
UNSAFE = re.compile(r"[^A-Za-z0-9_.\-\[\]=,+]+")
NAME_LIMIT = 150  # characters of a capture name (without .N, .failed and .jsonl)
HASH_LENGTH = 8  # hex digits of the hash that keeps changed names apart


def record_mode(config: pytest.Config) -> str:
    mode = config.getoption("mcpeek_record", None) or config.getini("mcpeek_record_mode")
    return str(mode or "once")


def test_name(item: pytest.Item) -> str:
    """``test_x[a-1]``, ``TestClass.test_y``: the node id after the file, made a file name.

    When that takes replacing characters (``test_x[Paris/1]`` → ``test_x[Paris_1]``) or
    cutting it to :data:`NAME_LIMIT`, a short hash of the node id after the file is
    appended (``test_x[Paris_1]-e4707314``), so two tests never share a capture
    (``test_x[Paris:1]`` is ``test_x[Paris_1]-79321b3e``)."""
    name = item.nodeid.split("::", 1)[1] if "::" in item.nodeid else item.name
    plain = name.replace("::", ".")
    safe = UNSAFE.sub("_", plain)
    if safe == plain and len(safe) <= NAME_LIMIT:
        return safe or "test"
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:HASH_LENGTH]
    return f"{safe[: NAME_LIMIT - HASH_LENGTH - 1]}-{digest}"


def capture_base(item: pytest.Item, options: dict[str, Any]) -> Path:
    """The first capture's path without ``.jsonl``; see docs/pytest-plugin.md."""
    test_dir = item.path.parent
    configured = str(item.config.getini("mcpeek_capture_dir") or "")
    if options.get("capture_dir") is not None:
        directory = test_dir / Path(options["capture_dir"])
    elif configured:
        directory = item.config.rootpath / configured
    else:
        directory = test_dir / "captures"
    name = options.get("name")
    if name is not None:
        return directory / str(name).removesuffix(".jsonl")
    return directory / item.path.stem / test_name(item)


def numbered(base: Path, number: int, kind: str = "") -> Path:
    """``base.jsonl``, ``base.2.jsonl`` …; ``kind`` (``failed``, ``recording``) before
    the suffix."""
    parts = [base.name, *([str(number)] if number > 1 else []), *([kind] if kind else [])]
    return base.with_name(".".join(parts) + ".jsonl")


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
        marker = item.get_closest_marker("mcp_record")
        options: dict[str, Any] = dict(marker.kwargs) if marker is not None else {}
        if marker is not None and marker.args:
            raise PluginError("@pytest.mark.mcp_record takes keyword arguments only")
        unknown = sorted(set(options) - set(MARKER_OPTIONS))
        if unknown:
            raise PluginError(
                f"@pytest.mark.mcp_record: unknown option {', '.join(unknown)} "
                f"(known: {', '.join(MARKER_OPTIONS)})"
            )
        self.mode: str = str(options.get("mode") or record_mode(item.config))
        if self.mode not in RECORD_MODES:
            raise PluginError(f"mcp_record mode {self.mode!r}: expected one of {RECORD_MODES}")
        default_fail_on = str(item.config.getini("mcpeek_fail_on") or "error")
        self.fail_on: str | None = options.get("fail_on", default_fail_on)
        if self.fail_on is not None and self.fail_on not in LEVELS:
            raise PluginError(f"fail_on={self.fail_on!r}: expected one of {LEVELS} or None")
        timing = options.get("timing", "fast")
        if timing not in ("fast", "recorded"):
            raise PluginError(f"timing={timing!r}: expected 'fast' or 'recorded'")
        self.timing: Timing = timing
        self.ignore: list[str] = _strings(options.get("ignore", ()))
        try:
            self.ignore_rules = check_rule_ids(_strings(options.get("ignore_rules", ())))
        except ValueError as exc:
            raise PluginError(f"ignore_rules: {exc}") from None
        self.base = capture_base(item, options)
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


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if not isinstance(value, (list, tuple, set, frozenset)):
        raise PluginError(f"expected a list of strings, not {value!r}")
    return [str(v) for v in value]
