"""``mcp_replay``: a mock MCP server made of a capture, for a client under test."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from mcpeek.inspector.pytest_plugin.checks import (
    at_least,
    client_side,
    describe,
    describe_misses,
    summary,
)
from mcpeek.inspector.pytest_plugin.runs import HttpMock, PluginError, StdioMock, Timing

if TYPE_CHECKING:
    import pytest

    from mcpeek.rules.engine import Reported

Transport = Literal["stdio", "http"]
END_TIMEOUT = 20.0
STRICT_LEVEL = "warning"  # like ``mcpeek serve --strict``: any rule but info ones


def resolve_capture(item: pytest.Item, path: str | Path) -> Path:
    """An absolute path as is; a relative one from the test file's directory, else from
    the rootdir. Raises :class:`PluginError` naming the places tried."""
    given = Path(path)
    if given.is_absolute():
        tried = [given]
    else:
        tried = [item.path.parent / given, item.config.rootpath / given]
    tried = list(dict.fromkeys(tried))  # the test file may be in the rootdir
    for candidate in tried:
        if candidate.is_file():
            return candidate
    for candidate in tried:
        if candidate.is_dir():
            raise PluginError(f"capture {str(path)!r}: {candidate} is a directory, not a capture")
    if len(tried) == 1:
        raise PluginError(f"no capture {str(path)!r}: {tried[0]} does not exist")
    places = " nor ".join(str(p) for p in tried)
    raise PluginError(f"no capture {str(path)!r}: neither {places} exists")


class ReplayMock:
    """A running mock (what ``mcp_replay(...)`` returns)."""

    def __init__(
        self, run: StdioMock | HttpMock, capture: Path, transport: Transport, strict: bool
    ) -> None:
        self._run = run
        self.capture = capture
        self.transport: Transport = transport
        self.strict = strict
        self.session_capture: Path = run.session_capture

    def __repr__(self) -> str:
        return f"<mcpeek mock of {self.capture.name} on {self.transport}>"

    @property
    def command(self) -> list[str]:
        """The argv a stdio client spawns as its server (``mcpeek serve CAPTURE ...``)."""
        if not isinstance(self._run, StdioMock):
            raise AttributeError("an HTTP mock has no command: use .url")
        return list(self._run.command)

    @property
    def url(self) -> str:
        """The Streamable HTTP endpoint (``http://127.0.0.1:PORT/mcp``)."""
        if not isinstance(self._run, HttpMock):
            raise AttributeError("a stdio mock has no url: spawn .command")
        return self._run.url

    def wait(self, timeout: float = END_TIMEOUT) -> bool:
        """stdio: wait until the client has closed the mock (True) or ``timeout`` passed.
        HTTP: stop the mock (True)."""
        return self._run.settle(timeout)

    def stop(self) -> None:
        """HTTP: stop listening (what teardown does). stdio: the client owns the process."""
        self._run.close()

    def _results(self) -> tuple[list[Reported], list[str]]:
        if isinstance(self._run, StdioMock) and not self._run.settle(END_TIMEOUT):
            raise PluginError(
                f"the mock of {self.capture.name} is still serving after {END_TIMEOUT:g} s: "
                "the client under test must close it (its stdin) before its violations are known"
            )
        found, directions, misses = self._run.results()
        if isinstance(self._run, HttpMock):
            return client_side(found, self._run.tape.direction), misses
        return client_side(found, directions.get), misses

    @property
    def violations(self) -> list[Reported]:
        """The rules the client under test broke (every severity), as ``mcpeek serve`` flags
        them. stdio: waits for the client to close the mock. HTTP: so far (after ``stop()``,
        all)."""
        return self._results()[0]

    @property
    def rule_ids(self) -> list[str]:
        """The distinct rule ids of :attr:`violations`, sorted."""
        return sorted({v.rule for v in self.violations})

    @property
    def misses(self) -> list[str]:
        """The client's requests the capture has no answer for (each answered with a
        JSON-RPC error naming the closest recorded request)."""
        return self._results()[1]

    def problems(self, min_severity: str = STRICT_LEVEL) -> str | None:
        violations, misses = self._results()
        failing = at_least(violations, min_severity)
        parts = []
        if failing:
            parts.append(
                f"mcpeek: the client broke {len(failing)} rule(s) talking to the mock of "
                f"{self.capture} ({summary(failing)}):\n{describe(failing)}"
            )
        if misses:
            parts.append(
                f"mcpeek: the client sent {len(misses)} request(s) the capture "
                f"{self.capture} has no answer for:\n{describe_misses(misses)}"
            )
        if not parts:
            return None
        return "\n\n".join([*parts, f"session capture: {self.session_capture}"])

    def check(self, min_severity: str = STRICT_LEVEL) -> None:
        """Raise ``AssertionError`` listing the client's violations at or above
        ``min_severity`` and the misses; what ``strict=True`` does after the test."""
        text = self.problems(min_severity)
        if text is not None:
            raise AssertionError(text)


class McpReplay:
    """The ``mcp_replay`` fixture: call it to start a mock; all stop after the test."""

    def __init__(self, item: pytest.Item, workdir: Path) -> None:
        self._item = item
        self._workdir = workdir
        self.mocks: list[ReplayMock] = []
        self._reported: set[int] = set()

    def __call__(
        self,
        capture: str | Path,
        transport: Transport = "stdio",
        *,
        strict: bool = False,
        ignore: Sequence[str] = (),
        timing: Timing = "fast",
    ) -> ReplayMock:
        import pytest

        if transport not in ("stdio", "http"):
            raise ValueError(f"transport must be 'stdio' or 'http', not {transport!r}")
        if timing not in ("fast", "recorded"):
            raise ValueError(f"timing must be 'fast' or 'recorded', not {timing!r}")
        if isinstance(ignore, str):
            ignore = [ignore]
        try:
            path = resolve_capture(self._item, capture)
            self._workdir.mkdir(parents=True, exist_ok=True)
            session = self._workdir / f"{path.stem}.{len(self.mocks) + 1}.session.jsonl"
            run: StdioMock | HttpMock
            if transport == "stdio":
                run = StdioMock(path, session, ignore=ignore, timing=timing)
            else:
                run = HttpMock(path, session, ignore=ignore, timing=timing)
        except PluginError as exc:
            error = f"mcp_replay: {exc}"
        else:
            mock = ReplayMock(run, path, transport, strict)
            self.mocks.append(mock)
            return mock
        pytest.fail(error, pytrace=False)  # outside the except: no "during handling" chain

    # -- the plugin's hooks ---------------------------------------------------------
    def settle(self, timeout: float) -> bool:
        return all(m.wait(timeout) for m in self.mocks if m.strict)

    def report(self, test_failed: bool) -> list[str]:
        """Problems of the ended strict mocks not reported yet (others: nothing)."""
        problems = []
        for n, mock in enumerate(self.mocks):
            if not mock.strict or n in self._reported or not mock.wait(0):
                continue
            self._reported.add(n)
            try:
                text = mock.problems()
            except PluginError as exc:
                text = f"mcp_replay: {exc}"
            if text is not None:
                problems.append(text)
        return problems

    def unfinished(self) -> list[str]:
        problems = []
        for n, mock in enumerate(self.mocks):
            if mock.strict and n not in self._reported:
                self._reported.add(n)
                problems.append(
                    f"mcp_replay: the client never closed the mock of {mock.capture.name}: "
                    "its violations are unknown (close the client before the test ends)"
                )
        return problems

    def close(self) -> None:
        for mock in self.mocks:
            mock.stop()
