"""One row of a session's flow list: a flow, its violations, the user's mark and note.

The :class:`~mcpeek.inspector.views.session.SessionModel` makes one per flow;
the filters test them, the viewer draws them, the actions (``--fault``) and
the assistant read them.
"""

from __future__ import annotations

from mcpeek.inspector.analysis import Flow
from mcpeek.inspector.records import Violation

SEVERITY_RANK = {"info": 0, "warning": 1, "error": 2}


class FlowItem:
    """One row of the flow list: a flow, its violations, the user's mark and note."""

    __slots__ = ("comment", "findings", "flow", "held", "marked", "version", "worst")

    def __init__(self, flow: Flow) -> None:
        self.flow = flow
        self.version = 0  # bumped on every change: a view's cache key
        self.findings: list[Violation] = []
        self.worst: str | None = None  # highest severity among findings
        self.marked = False
        self.comment = ""
        self.held: float | None = None  # seconds its answer has been held (--intercept)

    def add_finding(self, finding: Violation) -> None:
        self.findings.append(finding)
        if self.worst is None or SEVERITY_RANK.get(finding.severity, 0) > SEVERITY_RANK.get(
            self.worst, 0
        ):
            self.worst = finding.severity

    def clear_findings(self) -> None:
        self.findings = []
        self.worst = None

    @property
    def message_kind(self) -> str:
        """The kind of the flow's first message (``~k``): a request, or the lone
        notification or response of a flow without request."""
        flow = self.flow
        if flow.attempts:
            return "request"
        orphan = flow.orphan
        return (
            "response"
            if orphan is not None and orphan.kind in ("result", "error")
            else ("notification")
        )
