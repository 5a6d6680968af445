"""``replay --flow N`` and ``--filter EXPR``: which flows of a capture to re-send.

Numbers are checked, and the filter is compiled and run over the capture's
flows as the viewer's rows see them (with what ``lint`` finds, as the
viewer's re-check attaches it), before any server is started; the plan is
then cut down by :func:`~mcpeek.inspector.replay.replay_select.select_flows`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from mcpeek.inspector.cli.base import UsageError

if TYPE_CHECKING:
    from mcpeek.inspector.loaded import Capture
    from mcpeek.inspector.records import Violation
    from mcpeek.inspector.replay.replay_plan import ReplayPlan
    from mcpeek.rules.engine import Reported


def selected_plan(
    path: Path, plan: ReplayPlan, capture: Capture, flows: list[int], filter_text: str | None
) -> ReplayPlan:
    """The plan of the capture at ``path`` cut down to the ``--flow`` numbers and the
    ``--filter`` matches; a UsageError (one line) for what cannot be selected."""
    from mcpeek.inspector.filters import FilterError, compile_filter
    from mcpeek.inspector.replay.replay_select import (
        SelectionError,
        matching_flows,
        replayable,
        select_flows,
    )

    numbers = set(flows)
    if filter_text is not None:
        if not filter_text.strip():  # compiles to "everything": not what a selection means
            raise UsageError("--filter is empty: give an expression, e.g. '~m tools/call'")
        try:
            flt = compile_filter(filter_text)
        except FilterError as exc:
            raise UsageError(f"--filter: {exc}") from None
        matched = matching_flows(capture.flows, flt, lint_findings(path))
        # a filter picks among what can be re-sent (a notification it matches is not)
        numbers |= {n for n in matched if n in replayable(plan)}
        if not numbers:
            raise UsageError(f"--filter {filter_text!r} matches no client request of {path}")
    try:
        return select_flows(plan, numbers, capture.flows)
    except SelectionError as exc:
        raise UsageError(f"--flow: {exc}") from None


def lint_findings(path: Path) -> list[Violation]:
    """What ``lint`` finds in the capture (as the viewer re-checks it), for ``~v`` and ``~r``."""
    from mcpeek.inspector.analysis import Analyzer
    from mcpeek.inspector.capture.reader import CaptureReader
    from mcpeek.inspector.capture.run import run_capture
    from mcpeek.rules.engine import RuleEngine

    found: list[Reported] = []
    run_capture(CaptureReader(path), Analyzer([RuleEngine(found.append)]))
    return [reported.record() for reported in found]
