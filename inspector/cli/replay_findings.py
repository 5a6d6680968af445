"""The server-side violations a replay reports, bounded however much the server sends.

A live server that floods its stdout breaks a rule per line; keeping every
finding until the report cost hundreds of megabytes and printed each one.
:class:`ServerFindings` sits among the tape's listeners, before the rule
engine, so it knows the record being checked when a violation about it comes:
a server's violation is counted at once and kept only while its rule has
shown fewer than the proxies print (``PRINTED_PER_RULE``). A violation about
an earlier record (an unanswered request, once its time is up) waits for the
tape to say who sent it; those come per flow, not per line. This joins the
replay (core) and the rules, so it belongs to the CLI.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from mcpeek.inspector.analysis.listener import AnalysisListener
from mcpeek.inspector.cli.live import PRINTED_PER_RULE
from mcpeek.inspector.replay.per_kind import PerKind
from mcpeek.inspector.replay.tape import record_direction

if TYPE_CHECKING:
    from mcpeek.inspector.analysis import Conversation
    from mcpeek.inspector.records import Record
    from mcpeek.rules.engine import Reported

SHOWN_SEVERITIES = ("error", "warning")  # what replay prints; info only counts for nothing


class ServerFindings(AnalysisListener):
    """The rule engine's ``report`` callback (:meth:`add`), and a listener before it."""

    def __init__(self) -> None:
        self.shown: list[Reported] = []  # at most PRINTED_PER_RULE per rule
        self.errors = 0  # server-side errors found (the exit code)
        self._per_rule = PerKind(PRINTED_PER_RULE)
        self._last_seq: int | None = None  # the record being checked, and its sender
        self._last_dir: str | None = None
        self._undecided: list[Reported] = []  # about an earlier record: see decide()

    def on_record(self, record: Record, conversation: Conversation | None) -> None:
        self._last_seq = getattr(record, "seq", None)
        self._last_dir = record_direction(record)

    def add(self, v: Reported) -> None:
        if not v.msgs:
            return  # about no message: not a server's
        if v.msgs[-1] == self._last_seq:
            self._judge(v, self._last_dir)
        else:
            self._undecided.append(v)

    def decide(self, direction: Callable[[int], str | None]) -> None:
        """The run is over: sort the violations about earlier records by ``direction``."""
        undecided, self._undecided = self._undecided, []
        for v in undecided:
            self._judge(v, direction(v.msgs[-1]))

    def unshown(self) -> dict[str, int]:
        """Per rule, how many server-side errors and warnings were not kept to be shown."""
        return dict(self._per_rule.unsaid())

    def _judge(self, v: Reported, sender: str | None) -> None:
        if sender != "s2c":
            return  # the client side is the recording's, replayed as it was
        self.errors += v.severity == "error"
        if v.severity in SHOWN_SEVERITIES and self._per_rule.admit(v.rule):
            self.shown.append(v)
