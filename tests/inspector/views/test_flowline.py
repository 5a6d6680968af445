"""The flow lines of ``mcpeek show`` and ``--log flows``, from built records."""

from __future__ import annotations

import json

from mcpeek.inspector.analysis import Analyzer
from mcpeek.inspector.testing.records import RecordBuilder
from mcpeek.inspector.views.flowline import FlowPrinter


def cancelled_with_late_progress() -> RecordBuilder:
    """What server-everything does (tests/e2e/test_thirdparty_npm.py): its long
    operation keeps reporting progress after the client cancelled the call."""
    b = RecordBuilder()
    b.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}}, id=0)
    b.result(0, {"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {}})
    b.request("tools/call", {"name": "long"}, id=10, meta={"progressToken": 10})
    b.notify("notifications/progress", {"progressToken": 10, "progress": 1, "total": 4})
    b.notify("notifications/cancelled", {"requestId": 10, "reason": "user"}, dir="c2s")
    for step in (2, 3, 4):
        b.notify("notifications/progress", {"progressToken": 10, "progress": step, "total": 4})
    b.request("ping", id=11)
    b.result(11)
    return b


def printed(b: RecordBuilder, fmt: str) -> list[str]:
    lines: list[str] = []
    analyzer = Analyzer([FlowPrinter(lines.append, fmt)])
    analyzer.feed_all(b.records)
    analyzer.finish()
    return lines


def test_progress_after_a_cancellation_is_printed_on_the_cancelled_flow() -> None:
    lines = printed(cancelled_with_late_progress(), "text")
    call = [ln for ln in lines if "tools/call long" in ln]
    assert [ln.split("  ", 2)[-1] for ln in call] == [
        "id 10  ← cancelled  [1 progress]",
        "id 10  ← cancelled  [2 progress]  (after its end: notifications/progress)",
        "id 10  ← cancelled  [3 progress]  (after its end: notifications/progress)",
        "id 10  ← cancelled  [4 progress]  (after its end: notifications/progress)",
    ]
    # nothing else printed for them: no orphan, no extra row
    assert len(lines) == 2 + len(call)


def test_json_lines_carry_the_new_count() -> None:
    lines = printed(cancelled_with_late_progress(), "json")
    calls = [json.loads(ln) for ln in lines if '"tools/call"' in ln]
    assert [(c["status"], c["progress"]) for c in calls] == [
        ("cancelled", 1),
        ("cancelled", 2),
        ("cancelled", 3),
        ("cancelled", 4),
    ]
    assert len({c["flow"] for c in calls}) == 1


def test_a_flow_answered_normally_prints_once() -> None:
    b = RecordBuilder()
    b.request("tools/call", {"name": "count"}, id=1, meta={"progressToken": "t"})
    b.notify("notifications/progress", {"progressToken": "t", "progress": 1})
    b.result(1, {"content": []})
    lines = printed(b, "text")
    assert len(lines) == 1 and lines[0].endswith("[1 progress]")
