"""What correlation peeked of a message is there for its listeners while they hear of it."""

from __future__ import annotations

from typing import Any

import msgspec

from mcpeek.inspector.analysis import AnalysisListener, Analyzer, Conversation, Entry, Flow
from mcpeek.inspector.testing.records import RecordBuilder

UNSET = msgspec.UNSET


def test_a_listener_reads_the_peek_of_the_message_it_hears_of() -> None:
    seen: list[tuple[str, Any]] = []

    class Reader(AnalysisListener):
        def on_message(self, entry: Entry, flow: Flow, conversation: Conversation) -> None:
            peeked = conversation.peeked
            if entry.kind == "request":
                meta = peeked.params_peek.meta
                seen.append((entry.kind, meta.progress_token if meta is not None else None))
            elif entry.kind == "notification":
                seen.append((entry.kind, peeked.params_peek.progress_token))
            else:
                seen.append((entry.kind, peeked.result_peek.tools))

    b = RecordBuilder()
    b.request("tools/call", {"name": "a", "_meta": {"progressToken": "t1"}}, id=1)
    b.notify("notifications/progress", {"progressToken": "t1", "progress": 1}, dir="s2c")
    b.result(1, {"content": []})
    b.request("tools/list", id=2)
    b.result(2, {"tools": [{"name": "a", "inputSchema": {"type": "object"}}]})
    # a batch: each member is heard of with its own peek
    b.raw(
        '[{"jsonrpc": "2.0", "method": "notifications/progress", '
        '"params": {"progressToken": "t9", "progress": 2}}]'
    )
    analyzer = Analyzer([Reader()])
    analyzer.feed_all(b.records)
    analyzer.finish()
    assert seen == [
        ("request", "t1"),
        ("notification", "t1"),
        ("result", UNSET),
        ("request", None),
        ("result", [{"name": "a", "inputSchema": {"type": "object"}}]),
        ("notification", "t9"),
    ]
