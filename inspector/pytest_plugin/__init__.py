"""mcpeek's pytest plugin (entry point ``pytest11``: ``mcpeek``).

Fixtures:

- ``mcp_replay(capture, transport="stdio"|"http", strict=False, ignore=[], timing="fast")``
  — a mock MCP server made of a capture, for a client under test: ``.command``
  (stdio: the argv to spawn) or ``.url`` (HTTP); ``.violations`` / ``.rule_ids``
  (what the client got wrong), ``.misses``, ``.check()``.
- ``mcp_record`` — the test's MCP traffic through mcpeek: ``.stdio(argv)`` returns
  the argv to spawn instead of the server, ``.http(url)`` the URL to use instead of
  the server's; after the test the capture is linted and the test fails on
  violations at or above ``fail_on``. Record modes (``--mcpeek-record``) decide
  whether a call records the real server or replays its saved capture.

Marker ``@pytest.mark.mcp_record(fail_on=..., capture_dir=..., name=..., mode=...,
ignore=..., ignore_rules=..., timing=...)``. Ini options ``mcpeek_record_mode``,
``mcpeek_capture_dir``, ``mcpeek_fail_on``. The whole story: docs/pytest-plugin.md.

Checks run when the test function returns (a violation fails the test); traffic
still going on then (a stdio client a fixture owns) is checked at this fixture's
teardown (a violation is then an error at teardown).
"""

from __future__ import annotations

from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Protocol

import pytest

from mcpeek.inspector.pytest_plugin.record import McpRecord
from mcpeek.inspector.pytest_plugin.record_config import RECORD_MODES, record_mode
from mcpeek.inspector.pytest_plugin.replay import McpReplay, ReplayMock
from mcpeek.inspector.pytest_plugin.runs import PluginError

__all__ = ["McpRecord", "McpReplay", "PluginError", "ReplayMock"]

CALL_WAIT = 3.0  # after the test function: how long a stdio client may take to close
END_TIMEOUT = 20.0  # at teardown


class _Tracked(Protocol):
    def settle(self, timeout: float) -> bool: ...
    def report(self, test_failed: bool) -> list[str]: ...
    def unfinished(self) -> list[str]: ...
    def close(self) -> None: ...


_TRACKED = pytest.StashKey[list[_Tracked]]()
_FAILED = pytest.StashKey[bool]()


# -- configuration ---------------------------------------------------------------------
def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("mcpeek", "mcpeek: record and replay MCP traffic")
    group.addoption(
        "--mcpeek-record",
        dest="mcpeek_record",
        choices=RECORD_MODES,
        default=None,
        help="mcp_record mode: once (default: record a test with no capture, replay one "
        "that has), new (record missing captures, replay existing ones), none (replay "
        "only), all (record everything again)",
    )
    parser.addini(
        "mcpeek_record_mode", "mcp_record mode when --mcpeek-record is not given", default="once"
    )
    parser.addini(
        "mcpeek_capture_dir",
        "where mcp_record keeps captures, relative to the rootdir "
        "(default: captures/ next to each test file)",
        default="",
    )
    parser.addini(
        "mcpeek_fail_on",
        "mcp_record fails a test on violations at or above this severity "
        "(error, warning, info; default error)",
        default="error",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "mcp_record(fail_on='error', capture_dir=None, name=None, mode=None, ignore=(), "
        "ignore_rules=(), timing='fast'): options of the mcp_record fixture (mcpeek)",
    )
    mode = record_mode(config)
    if mode not in RECORD_MODES:
        raise pytest.UsageError(
            f"mcpeek_record_mode = {mode!r}: expected one of {', '.join(RECORD_MODES)}"
        )
    fail_on = config.getini("mcpeek_fail_on")
    if fail_on not in ("error", "warning", "info"):
        raise pytest.UsageError(f"mcpeek_fail_on = {fail_on!r}: expected error, warning or info")


def pytest_report_header(config: pytest.Config) -> list[str]:
    lines = [f"mcpeek: record mode {record_mode(config)}"]
    capture_dir = config.getini("mcpeek_capture_dir")
    if capture_dir:
        lines.append(f"mcpeek: captures in {config.rootpath / str(capture_dir)}")
    return lines


# -- checking after the test function ------------------------------------------------------
@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    try:
        yield
    except BaseException:
        item.stash[_FAILED] = True
        _section(item, _check(item, test_failed=True, timeout=CALL_WAIT))
        raise
    problems = _check(item, test_failed=False, timeout=CALL_WAIT)
    if problems:
        item.stash[_FAILED] = True
        pytest.fail("\n\n".join(problems), pytrace=False)


def _check(item: pytest.Item, *, test_failed: bool, timeout: float) -> list[str]:
    problems: list[str] = []
    for tracked in item.stash.get(_TRACKED, []):
        try:
            tracked.settle(timeout)
            problems += tracked.report(test_failed)
        except Exception as exc:  # a bug here must not hide the test's own outcome
            problems.append(f"mcpeek plugin: {type(exc).__name__}: {exc}")
    return problems


def _section(item: pytest.Item, problems: list[str]) -> None:
    if problems:
        item.add_report_section("call", "mcpeek", "\n\n".join(problems))


def _teardown(item: pytest.Item, tracked: _Tracked) -> None:
    failed = item.stash.get(_FAILED, False)
    try:
        tracked.settle(END_TIMEOUT)
        problems = tracked.report(failed) + tracked.unfinished()
    finally:
        tracked.close()
    if problems and failed:
        _section(item, problems)
    elif problems:
        pytest.fail("\n\n".join(problems), pytrace=False)


def _track(item: pytest.Item, tracked: _Tracked) -> None:
    item.stash.setdefault(_TRACKED, []).append(tracked)


# -- fixtures ------------------------------------------------------------------------------
@pytest.fixture
def mcp_replay(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[McpReplay]:
    """Start mock MCP servers from captures: ``mock = mcp_replay("captures/x.jsonl")``;
    a stdio client spawns ``mock.command``, an HTTP one uses ``mock.url``."""
    item = request.node
    assert isinstance(item, pytest.Item)
    replay = McpReplay(item, tmp_path / "mcpeek")
    _track(item, replay)
    yield replay
    _teardown(item, replay)


@pytest.fixture
def mcp_record(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[McpRecord]:
    """Run the test's MCP traffic through mcpeek: ``mcp_record.stdio(argv)`` /
    ``mcp_record.http(url)``; record or replay per ``--mcpeek-record``, lint after."""
    item = request.node
    assert isinstance(item, pytest.Item)
    error = None
    try:
        recorder = McpRecord(item, tmp_path / "mcpeek")
    except PluginError as exc:
        error = str(exc)
    if error is not None:  # outside the except: no "during handling" chain in the report
        pytest.fail(error, pytrace=False)
    _track(item, recorder)
    yield recorder
    _teardown(item, recorder)
