"""Live analysis for a proxy: flow lines and spec flags while the traffic flows.

The proxy hands every record it wrote to :meth:`LiveAnalysis.feed` (after
forwarding). Flows are correlated; with checks on, every rule runs and each
violation is appended to the capture as a ``violation`` record and printed
on stderr as one line::

    mcpeek: ERROR result.result-type-missing tools/call id 4: result has no resultType  <url>

This module wires the core to the rules, so it belongs to the CLI.
"""

from __future__ import annotations

from collections.abc import Callable

from inspector.analysis import AnalysisListener, Analyzer
from inspector.capture.writer import CaptureWriter
from inspector.records import Record, Violation
from inspector.views.flowline import FlowPrinter


class LiveAnalysis:
    def __init__(
        self,
        writer: CaptureWriter,
        say: Callable[[str], None],
        *,
        checks: bool,
        flows: bool,
        spec: str | None = None,
    ) -> None:
        listeners: list[AnalysisListener] = []
        self.violations = 0
        self._writer = writer
        self._say = say
        if flows:
            listeners.append(FlowPrinter(say))
        if checks:
            from rules.engine import RuleEngine

            listeners.append(RuleEngine(self._report, spec=spec))
        self.analyzer = Analyzer(listeners) if listeners else None
        if self.analyzer is not None:
            self.analyzer.feed(writer.header)  # the transport decides how to route messages

    @property
    def active(self) -> bool:
        return self.analyzer is not None

    def feed(self, record: Record) -> None:
        if self.analyzer is not None:
            self.analyzer.feed(record)

    def finish(self) -> None:
        """The traffic is over: end what is open (its violations still reach the capture)."""
        if self.analyzer is not None:
            self.analyzer.finish()

    def _report(self, reported: object) -> None:
        from rules.engine import Reported, flag_line

        assert isinstance(reported, Reported)
        self.violations += 1
        if not self._writer.closed:
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
