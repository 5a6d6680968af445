"""A capture's spans: the analysis (flows, and the rules for the violations) run once.

:class:`Traced` wires the :class:`~mcpeek.inspector.analysis.Analyzer`, the rule
engine and the :class:`~mcpeek.inspector.export.spans.SpanBuilder` together;
:func:`capture_spans` runs a whole capture through the one loop, and the
``--otlp`` follower (:mod:`.follow`) runs a growing one through it.
Violations are recomputed, as ``lint`` does: a capture recorded with
``--no-check`` gets them too.
"""

from __future__ import annotations

from pathlib import Path

from mcpeek.inspector.analysis import Analyzer
from mcpeek.inspector.analysis.analyzer import DEFAULT_TIMEOUT
from mcpeek.inspector.capture.reader import CaptureError, CaptureReader
from mcpeek.inspector.capture.run import run_capture
from mcpeek.inspector.export.spandata import Finding, SpanData, time_out_of_range
from mcpeek.inspector.export.spans import SpanBuilder
from mcpeek.rules.engine import Reported, RuleEngine


class Traced:
    """An Analyzer whose flows and findings become spans (:attr:`builder`)."""

    def __init__(self, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.builder = SpanBuilder(lambda: self.analyzer.header)
        engine = RuleEngine(self._found)
        self.analyzer = Analyzer([engine, self.builder], timeout=timeout)

    def _found(self, reported: Reported) -> None:
        self.builder.found(
            Finding(
                rule=reported.rule,
                severity=reported.severity,
                msgs=list(reported.msgs),
                message=reported.message,
                spec=reported.spec,
            )
        )


def capture_spans(path: Path, timeout: float = DEFAULT_TIMEOUT) -> tuple[list[SpanData], list[str]]:
    """Every span of the capture at ``path``, and the reader's problems with the file.

    Raises :class:`~mcpeek.inspector.capture.reader.CaptureError` for a file that
    is not a capture, or whose times OTLP cannot carry (before 1970, past 2554):
    both ``otlp-json`` and ``otlp`` refuse it, before writing or sending anything."""
    traced = Traced(timeout)
    reader = CaptureReader(path)
    run_capture(reader, traced.analyzer)
    spans = traced.builder.drain()
    for span in spans:
        if (reason := time_out_of_range(span)) is not None:
            raise CaptureError(f"{path}: {reason}")
    return spans, reader.problems
