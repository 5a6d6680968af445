"""Progress rules: progress.* (unknown tokens, values not increasing, after the response)."""

from __future__ import annotations

from mcpeek.inspector.testing.records import RecordBuilder
from mcpeek.rules.testing import fired
from tests.rules.test_subscriptions import family, legacy_handshake


def test_progress_with_an_unknown_token() -> None:
    b = RecordBuilder(modern=True)
    b.request("tools/call", {"name": "x"}, id=1, meta={"progressToken": "a"})
    stray = b.notify("notifications/progress", {"progressToken": "nope", "progress": 1})
    b.notify("notifications/progress", {"progressToken": "a", "progress": 1})
    (v,) = fired(b.records, "progress.unknown-token")
    assert v.msgs == [stray.seq] and '"nope"' in v.message


def test_progress_token_types_are_kept_apart() -> None:
    b = RecordBuilder(modern=True)
    b.request("tools/call", {"name": "x"}, id=1, meta={"progressToken": 1})
    stray = b.notify("notifications/progress", {"progressToken": "1", "progress": 1})
    (v,) = fired(b.records, "progress.unknown-token")
    assert v.msgs == [stray.seq]


def test_progress_not_increasing() -> None:
    b = RecordBuilder(modern=True)
    b.request("tools/call", {"name": "x"}, id=1, meta={"progressToken": "a"})
    b.notify("notifications/progress", {"progressToken": "a", "progress": 1})
    two = b.notify("notifications/progress", {"progressToken": "a", "progress": 2})
    same = b.notify("notifications/progress", {"progressToken": "a", "progress": 2})
    b.notify("notifications/progress", {"progressToken": "a", "progress": 2.5})
    (v,) = fired(b.records, "progress.not-increasing")
    assert v.msgs == [two.seq, same.seq]
    assert "not greater than the previous 2" in v.message


def test_progress_per_request_starts_afresh() -> None:
    b = RecordBuilder(modern=True)
    b.request("tools/call", {"name": "x"}, id=1, meta={"progressToken": "a"})
    b.notify("notifications/progress", {"progressToken": "a", "progress": 5})
    b.result(1, {"content": []})
    b.request("tools/call", {"name": "x"}, id=2, meta={"progressToken": "a"})  # token reused
    b.notify("notifications/progress", {"progressToken": "a", "progress": 1})
    b.result(2, {"content": []})
    assert family(b.records) == []


def test_progress_after_the_response() -> None:
    b = RecordBuilder(modern=True)
    req = b.request("tools/call", {"name": "x"}, id=1, meta={"progressToken": "a"})
    res = b.result(1, {"content": []})
    late = b.notify("notifications/progress", {"progressToken": "a", "progress": 9})
    (v,) = fired(b.records, "progress.after-response")
    assert v.msgs == [req.seq, res.seq, late.seq]
    assert "after the response to tools/call (id 1)" in v.message
    assert fired(b.records, "progress.unknown-token") == []


def test_progress_after_a_task_handle_is_fine() -> None:
    b = RecordBuilder()
    legacy_handshake(b)
    b.request("tools/call", {"name": "x", "task": {}, "_meta": {"progressToken": "a"}}, id=1)
    b.result(1, {"task": {"taskId": "t1", "status": "working"}})
    b.notify("notifications/progress", {"progressToken": "a", "progress": 1})
    assert family(b.records) == []


def test_each_side_has_its_own_progress_tokens() -> None:
    b = RecordBuilder()
    legacy_handshake(b)
    b.request("tools/call", {"name": "x", "_meta": {"progressToken": 1}}, id=1)
    b.request(
        "sampling/createMessage", {"messages": [], "_meta": {"progressToken": 1}}, id=1, dir="s2c"
    )
    b.notify("notifications/progress", {"progressToken": 1, "progress": 5})  # for tools/call
    b.notify("notifications/progress", {"progressToken": 1, "progress": 1}, dir="c2s")  # sampling
    b.notify("notifications/progress", {"progressToken": 1, "progress": 6})
    b.notify("notifications/progress", {"progressToken": 1, "progress": 2}, dir="c2s")
    b.result(1, {"role": "assistant"}, dir="c2s")
    b.result(1, {"content": []})
    assert family(b.records) == []
