"""A pytest plugin for ``lint_findings.py``: every violation every rule engine reports
during a test run, written by test to ``$MCPEEK_FINDINGS_OUT`` (one JSON line a test).

    MCPEEK_FINDINGS_OUT=out.jsonl python -m pytest tests/rules -p lint_findings_plugin

It wraps :class:`~mcpeek.rules.engine.RuleEngine`'s ``report`` (the twin engine of a
verified one included), so it sees what the engines find, not what a test kept.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Generator
from typing import Any

import msgspec
import pytest

PROPERTY_TEST = "(a property test: its examples, hence its findings, vary; not compared)"


class FindingsLog:
    """The violations of the test being run, written out when it ends."""

    def __init__(self, path: str) -> None:
        self.out = open(path, "wb")  # noqa: SIM115 (closed at the session's end)
        self.found: list[Any] = []

    def wrap(self, report: Callable[[Any], None]) -> Callable[[Any], None]:
        def logged(violation: Any) -> None:
            self.found.append(violation)
            report(violation)

        return logged

    def test_done(self, nodeid: str, *, varies: bool) -> None:
        found: Any = PROPERTY_TEST if varies else self.found
        line = msgspec.json.encode({"test": nodeid, "found": found})
        self.out.write(line + b"\n")
        self.found = []


def pytest_configure(config: pytest.Config) -> None:
    path = os.environ.get("MCPEEK_FINDINGS_OUT")
    if not path:
        return
    from mcpeek.rules.engine import RuleEngine

    log = FindingsLog(path)
    config.stash[LOG] = log
    original = RuleEngine.__init__

    def init(self: RuleEngine, report: Callable[[Any], None], **options: Any) -> None:
        original(self, log.wrap(report), **options)

    RuleEngine.__init__ = init  # type: ignore[method-assign]


LOG = pytest.StashKey[FindingsLog]()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Generator[None, None, None]:
    yield
    log = item.config.stash.get(LOG, None)
    if log is not None:
        # A Hypothesis test's examples vary from run to run, so its findings do too.
        log.test_done(item.nodeid, varies=hasattr(getattr(item, "obj", None), "hypothesis"))


def pytest_unconfigure(config: pytest.Config) -> None:
    log = config.stash.get(LOG, None)
    if log is not None:
        log.out.close()
