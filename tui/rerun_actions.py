"""Re-running the selected flow from the viewer (``r``, ``R``): a mixin of the app.

``r`` re-runs it against a fresh server: the stdio command its capture's
header names, started in a new process, or the HTTP upstream the header
names. ``R`` re-runs it against the live server of a running ``mcpeek
http``: the upstream of the newest live HTTP session open in the viewer (the
one the viewer was started with by ``mcpeek http``, or one it follows), not
through that proxy, whose capture must not receive the re-run.

The re-run is :func:`~mcpeek.inspector.replay.rerun.replay_flows` (what
``mcpeek replay --flow N`` does), in a worker thread; its own capture is a
new file beside the viewed one (``NAME.rerun-FLOW-N.jsonl``), never the
viewed capture. The answer opens in a :class:`~mcpeek.tui.rerun_screen.RerunScreen`;
a server that no longer starts (or a flow that cannot be re-sent) gives a
notice, and nothing else changes.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from textual import work
from textual.app import App

from mcpeek.inspector.capture.files import CaptureFileError
from mcpeek.inspector.capture.reader import CaptureError
from mcpeek.inspector.replay.replay_select import SelectionError
from mcpeek.inspector.replay.replay_transport import ReplayError
from mcpeek.inspector.replay.rerun import ReplayOutcome, ReplayTarget, replay_flows
from mcpeek.rules.engine import Reported, RuleEngine, flag_line
from mcpeek.tui.rerun_screen import RerunScreen

if TYPE_CHECKING:
    from mcpeek.inspector.views.session import FlowItem, SessionModel
    from mcpeek.tui.flow_list import FlowList
    from mcpeek.tui.session_view import SessionView

LAST_NUMBER = 999  # re-runs of one flow numbered before giving up


class RerunActions(App[None]):
    """The re-run keys; the state they use is the app's (declared here)."""

    views: list[SessionView]
    current: SessionView | None
    runs_proxy: bool
    flow_list: FlowList

    def action_rerun(self) -> None:
        view, item = self.current, self.flow_list.current_item
        if view is None or item is None or view.model.header is None:
            return
        target = recorded_target(view.model)
        if target is None:
            self.notify("the capture's header names no server to start", severity="warning")
            return
        self._start(view.model, item, target, describe(target))

    def action_rerun_live(self) -> None:
        view, item = self.current, self.flow_list.current_item
        if view is None or item is None:
            return
        live = self.live_proxy()
        if live is None:
            self.notify(
                "no live mcpeek http session is open here (r re-runs against a fresh server)",
                severity="warning",
            )
            return
        target = recorded_target(live.model)
        assert target is not None  # an http header names its upstream
        self._start(view.model, item, target, f"the live server of {live.model.name}")

    def live_proxy(self) -> SessionView | None:
        """The newest HTTP session open here whose proxy still runs."""
        for view in self.views:
            model = view.model
            header = model.header
            if header is None or header.transport != "http" or not isinstance(header.target, str):
                continue
            if model.listening and not model.ended and (self.runs_proxy or view.follow):
                return view
        return None

    def _start(
        self, model: SessionModel, item: FlowItem, target: ReplayTarget, against: str
    ) -> None:
        flow = item.flow
        if flow.sender != "c2s" or not flow.attempts:
            self.notify(
                f"flow {flow.number} is not a client request: nothing to re-run", severity="warning"
            )
            return
        self.notify(f"re-running flow {flow.number} against {against}")
        self.rerun(model.path, flow.number, target, against)

    @work(thread=True, group="rerun")
    def rerun(self, capture: Path, number: int, target: ReplayTarget, against: str) -> None:
        found: list[Reported] = []  # the rules check the live traffic, as replay's do
        try:
            writer_path = free_capture_path(capture, number)
            outcome = replay_flows(
                capture,
                [number],
                target,
                write=writer_path,
                listeners=[RuleEngine(found.append)],
            )
        except (
            ReplayError,
            SelectionError,
            CaptureError,
            CaptureFileError,
            OSError,
            ValueError,
        ) as exc:
            self.call_from_thread(
                self.notify,
                f"flow {number}: {exc}",
                title="cannot re-run",
                severity="error",
                timeout=10,
            )
            return
        server = [v for v in found if v.msgs and outcome.tape.direction(v.msgs[-1]) == "s2c"]
        flags = [flag_line(v) for v in server if v.severity in ("error", "warning")]
        self.call_from_thread(self._show, outcome, against, flags)

    def _show(self, outcome: ReplayOutcome, against: str, flags: list[str]) -> None:
        (report,), (live,) = outcome.reports, outcome.live
        self.push_screen(RerunScreen(report, live, against, outcome.capture, flags, outcome.notes))


def recorded_target(model: SessionModel) -> ReplayTarget | None:
    """The server a capture's header names: its stdio command, or its HTTP upstream."""
    header = model.header
    if header is None:
        return None
    if header.transport == "http" and isinstance(header.target, str) and header.target:
        return ReplayTarget(url=header.target)
    if isinstance(header.target, list) and header.target:
        return ReplayTarget(command=list(header.target))
    return None


def describe(target: ReplayTarget) -> str:
    return target.url or " ".join(target.command or ())


def free_capture_path(capture: Path, number: int) -> Path:
    """A new file beside ``capture`` for the re-run of flow ``number``: the first
    ``NAME.rerun-FLOW-N.jsonl`` that does not exist yet (CaptureWriter refuses one
    that holds data anyway)."""
    stem = capture.name.removesuffix(".jsonl")
    for n in range(1, LAST_NUMBER + 1):
        candidate = capture.with_name(f"{stem}.rerun-{number}-{n}.jsonl")
        if not candidate.exists():
            return candidate
    raise CaptureFileError(f"{capture.parent}: {LAST_NUMBER} re-runs of flow {number} already")
