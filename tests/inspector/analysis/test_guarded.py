"""GuardedAnalyzer: a bug in one record's analysis is told once; the checks go on."""

from __future__ import annotations

import pytest

from mcpeek.inspector.analysis import AnalysisListener, Analyzer
from mcpeek.inspector.analysis.guarded import GuardedAnalyzer
from mcpeek.inspector.records import Record
from mcpeek.inspector.testing.records import RecordBuilder


class Flaky(AnalysisListener):
    def __init__(self, error: Exception) -> None:
        self.error = error
        self.seen: list[Record] = []

    def on_record(self, record: Record, conversation: object) -> None:
        self.seen.append(record)
        if len(self.seen) == 2:
            raise self.error


def four_pings_and_a_bug(what: str) -> tuple[list[Record], Flaky, GuardedAnalyzer]:
    """A header and four requests; a listener that fails on the second record; the
    guard around its Analyzer (its checks called ``what``)."""
    b = RecordBuilder()
    for i in range(4):
        b.request("ping", id=i + 1)
    listener = Flaky(RuntimeError("boom"))
    return b.records, listener, GuardedAnalyzer(Analyzer([listener]), what, "they go on")


def test_a_bug_is_told_once_and_the_next_records_are_analysed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    records, listener, checks = four_pings_and_a_bug("the checks")
    for record in records:  # the header first
        checks.feed(record)
    checks.finish()
    assert len(listener.seen) == 4  # every message after the failing one too
    err = capsys.readouterr().err
    assert err == "mcpeek: internal error in the checks (RuntimeError: boom); they go on\n"


def test_a_closed_pipe_is_no_bug_and_passes_through() -> None:
    b = RecordBuilder()
    b.request("ping", id=1)
    b.request("ping", id=2)
    checks = GuardedAnalyzer(Analyzer([Flaky(BrokenPipeError())]), "the checks")
    header, first, second = b.records
    checks.feed(header)
    checks.feed(first)
    with pytest.raises(BrokenPipeError):
        checks.feed(second)
