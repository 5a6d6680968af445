"""Checking a loaded capture again with every rule, in the viewer's own process.

:func:`recheck` runs the capture through the loop ``lint`` reads with
(:func:`~mcpeek.inspector.capture.run.run_capture`) and the same
:class:`~mcpeek.rules.engine.RuleEngine`, so it finds what ``lint`` would
print, as the engine's findings rather than text to parse. It runs in the
loader's worker thread; ``cancelled`` is asked before every record, so that
quitting the viewer never waits for a long recheck.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from mcpeek.inspector.analysis import Analyzer
from mcpeek.inspector.capture.reader import CaptureError, CaptureReader
from mcpeek.inspector.capture.run import run_capture
from mcpeek.inspector.records import Violation
from mcpeek.rules.engine import Reported, RuleEngine


def recheck(path: Path, cancelled: Callable[[], bool] = lambda: False) -> list[Violation] | None:
    """Every violation ``mcpeek lint`` finds in the capture, as capture records
    (``None`` if it cannot be read, or the check was cancelled)."""
    found: list[Reported] = []
    analyzer = Analyzer([RuleEngine(found.append)])
    try:
        if not run_capture(CaptureReader(path), analyzer, cancelled=cancelled):
            return None
    except (CaptureError, OSError):
        return None  # the loader has already said why, on the same file
    return [reported.record() for reported in found]
