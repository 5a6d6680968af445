"""A streaming Analyzer with a ``notification_window``: a long stream of progress on one
request keeps a bounded number of entries, and what is counted or shown stays whole."""

from __future__ import annotations

from mcpeek.inspector.analysis import NOTIFICATION_WINDOW, AnalysisListener, Analyzer
from mcpeek.inspector.analysis.conversation import Conversation
from mcpeek.inspector.analysis.flow import Entry, Flow
from mcpeek.inspector.testing.records import RecordBuilder
from mcpeek.inspector.views.flowline import flow_text

PROGRESS = 1000


class Watch(AnalysisListener):
    """The largest number of notifications a flow held, and the ended flows."""

    def __init__(self) -> None:
        self.most_held = 0
        self.ended: list[Flow] = []
        self.lines: list[str] = []  # each ended flow's line, as a flow printer writes it

    def on_message(self, entry: Entry, flow: Flow, conversation: Conversation) -> None:
        self.most_held = max(self.most_held, len(flow.notifications))

    def on_flow_end(self, flow: Flow, conversation: Conversation) -> None:
        self.ended.append(flow)
        self.lines.append(flow_text(flow))


def long_stream(edited_at: int | None = None) -> RecordBuilder:
    b = RecordBuilder()
    b.request("tools/call", {"name": "count", "_meta": {"progressToken": "p"}}, id=1)
    for i in range(PROGRESS):
        record = b.notify("notifications/progress", {"progressToken": "p", "progress": i + 1})
        if i == edited_at:
            record.made = "edit"
    b.result(1, {"content": []})
    return b


def run(b: RecordBuilder, window: int | None) -> Watch:
    watch = Watch()
    analyzer = Analyzer([watch], notification_window=window)
    analyzer.feed_all(b.records)
    analyzer.finish()
    return watch


def test_a_window_bounds_the_notifications_a_flow_holds() -> None:
    watch = run(long_stream(), NOTIFICATION_WINDOW)
    (flow,) = watch.ended
    assert watch.most_held <= 2 * NOTIFICATION_WINDOW
    assert flow.notification_count == flow.progress_count == PROGRESS
    assert flow.notifications[-1].seq == PROGRESS + 1  # the last one, kept


def test_the_flow_line_is_the_same_with_and_without_a_window() -> None:
    whole = run(long_stream(edited_at=3), None)
    windowed = run(long_stream(edited_at=3), NOTIFICATION_WINDOW)
    assert len(whole.ended[0].notifications) == PROGRESS
    # The edited notification was trimmed off; what mcpeek did to it was not.
    assert 3 + 2 not in {e.seq for e in windowed.ended[0].notifications}
    assert windowed.lines == whole.lines
    assert f"[{PROGRESS} progress, mcpeek: edit]" in whole.lines[0]
