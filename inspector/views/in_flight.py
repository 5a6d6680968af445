"""Requests in flight, and the ones that have waited too long (``--slow``).

A request is in flight while its flow's status is ``pending`` (the same
status ``~s pending`` filters on). :class:`InFlight` is an analysis listener
that keeps those flows as the analysis sees them start and end, so a front
end can count them, time them and single out the slow ones without walking
every flow: the viewer's status line and running timers, and the line
``mcpeek show --follow`` prints when a request passes the threshold
(:class:`SlowCalls`).

Elapsed time is ``now - flow.started``, where ``now`` is whatever clock the
caller passes: the wall clock for a live capture (a capture's times are the
proxy's wall clock), a controllable one in tests.

Concurrency: the viewer feeds the analysis in a loader thread and reads here
in the UI thread; readers take a copy of the dict (one C call, atomic under
the GIL), never iterate it live.
"""

from __future__ import annotations

from collections.abc import Callable

from mcpeek.inspector.analysis import AnalysisListener, Conversation, Entry, Flow
from mcpeek.inspector.capture.run import Analysis
from mcpeek.inspector.records import Record

DEFAULT_SLOW = 5.0  # seconds in flight after which a request is shown as slow


class InFlight(AnalysisListener):
    """The flows whose request is still unanswered (status ``pending``), by number."""

    def __init__(self) -> None:
        self._flows: dict[int, Flow] = {}
        self._told: set[int] = set()  # flows :meth:`newly_slow` returned already

    def on_message(self, entry: Entry, flow: Flow, conversation: Conversation) -> None:
        # Every message of a flow passes here: its request, its notifications, its
        # answer; an MRTR retry makes a chain pending again.
        if flow.status == "pending":
            self._flows[flow.number] = flow
        elif self._flows.pop(flow.number, None) is not None:
            self._told.discard(flow.number)

    def on_flow_end(self, flow: Flow, conversation: Conversation) -> None:
        # An expiry (--timeout) or a closed connection ends a flow without a message.
        self._flows.pop(flow.number, None)
        self._told.discard(flow.number)

    def __len__(self) -> int:
        return len(self._flows)

    def flows(self) -> list[Flow]:
        """The flows in flight, oldest first (a copy: safe from another thread)."""
        return list(self._flows.copy().values())

    def slow_count(self, now: float, slow: float) -> int:
        """How many have been in flight for ``slow`` seconds or more at ``now``."""
        return sum(now - flow.started >= slow for flow in self.flows())

    def newly_slow(self, now: float, slow: float) -> list[Flow]:
        """The flows that passed ``slow`` seconds in flight since the last call (each
        flow once, until it is answered and pending again)."""
        passed = [
            flow
            for flow in self.flows()
            if flow.number not in self._told and now - flow.started >= slow
        ]
        self._told.update(flow.number for flow in passed)
        return passed


class SlowCalls:
    """An analysis for :func:`~mcpeek.inspector.capture.run.run_capture` that, each
    time the clock ticks (while following waits for more), tells ``tell`` of every
    request that has now been in flight for ``slow`` seconds, with how long."""

    def __init__(
        self,
        analysis: Analysis,
        in_flight: InFlight,
        slow: float,
        tell: Callable[[Flow, float], None],
    ) -> None:
        self._analysis = analysis
        self._in_flight = in_flight
        self._slow = slow
        self._tell = tell

    def feed(self, record: Record) -> None:
        self._analysis.feed(record)

    def tick(self, now: float) -> None:
        self._analysis.tick(now)  # first: a request past --timeout is unanswered, not slow
        for flow in self._in_flight.newly_slow(now, self._slow):
            self._tell(flow, now - flow.started)

    def finish(self) -> None:
        self._analysis.finish()
