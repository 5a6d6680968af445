"""Pairing requests and responses: response.*, notification.with-id, request.unanswered."""

from __future__ import annotations

from mcpeek.inspector.testing.records import RecordBuilder
from tests.rules.test_envelope import (
    SUB,
    found,
    initialize,
)


# -- response.unknown-id / duplicate / to-notification -----------------------------------
def test_unknown_id() -> None:
    b = RecordBuilder()
    initialize(b)
    stray = b.result(99, {"content": []})
    b.request("ping", id=1)
    wrong_type = b.result("1")
    no_id = b.raw('{"jsonrpc":"2.0","result":{}}', "s2c")
    b.result(1)
    violations = found(b.records, "response.unknown-id")
    assert [v.msgs for v in violations] == [[stray.seq], [wrong_type.seq], [no_id.seq]]
    assert "result for id 99 matches no request from the client" in violations[0].message
    assert 'id "1"' in violations[1].message and "no id" in violations[2].message


def test_late_answers_are_not_unknown() -> None:
    b = RecordBuilder(modern=True)
    b.request("tools/call", {"name": "slow"}, id=7)
    b.notify("notifications/cancelled", {"requestId": 7}, dir="c2s")
    b.result(7, {"content": []})  # crossed the cancellation
    b.request("tools/call", {"name": "slower"}, id=8)
    b.wait(90)
    b.request("tools/list", id=9)  # time passes: 8 is declared unanswered
    b.result(9, {"tools": []})
    b.result(8, {"content": []})  # then answered late
    assert found(b.records, "response.unknown-id") == []
    assert found(b.records, "response.duplicate") == []


def test_duplicate_response() -> None:
    b = RecordBuilder(modern=True)
    request = b.request("tools/call", {"name": "t"}, id=3)
    first = b.result(3, {"content": []})
    second = b.error(3, -32603, "late failure")
    (v,) = found(b.records, "response.duplicate")
    assert v.msgs == [request.seq, first.seq, second.seq]
    assert "second response to tools/call (id 3)" in v.message
    assert found(b.records, "response.unknown-id") == []


def test_notification_with_id_and_its_answer() -> None:
    b = RecordBuilder()
    initialize(b)
    wrong = b.request("notifications/initialized", id=1)
    answer = b.result(1)
    b.notify("notifications/initialized", dir="c2s")  # a right one
    (with_id,) = found(b.records, "notification.with-id")
    assert with_id.msgs == [wrong.seq] and "notifications/initialized carries id 1" in (
        with_id.message
    )
    (answered,) = found(b.records, "response.to-notification")
    assert answered.msgs == [wrong.seq, answer.seq]
    assert "answers notifications/initialized (id 1)" in answered.message


def test_notification_with_id_unanswered_is_not_request_unanswered() -> None:
    b = RecordBuilder()
    initialize(b)
    b.request("notifications/progress", {"progressToken": 1, "progress": 1}, id=4, dir="s2c")
    assert len(found(b.records, "notification.with-id")) == 1
    assert found(b.records, "request.unanswered") == []
    assert found(b.records, "response.to-notification") == []


# -- request.unanswered -----------------------------------------------------------------
def test_unanswered_at_the_end() -> None:
    b = RecordBuilder(modern=True)
    b.request("tools/call", {"name": "fast"}, id=1)
    b.result(1, {"content": []})
    slow = b.request("tools/call", {"name": "slow"}, id=2)
    (v,) = found(b.records, "request.unanswered")
    assert v.severity == "warning" and v.msgs == [slow.seq]
    assert "tools/call (id 2) got no response from the server before the connection" in v.message


def test_unanswered_after_the_timeout() -> None:
    b = RecordBuilder()
    initialize(b)
    slow = b.request("tools/call", {"name": "slow"}, id=1)
    b.wait(10)
    b.request("ping", id=2)
    b.result(2)
    (v,) = found(b.records, "request.unanswered", timeout=5)
    assert v.msgs == [slow.seq] and "within the timeout" in v.message


def test_unanswered_near_misses() -> None:
    b = RecordBuilder(modern=True)
    b.request("tools/call", {"name": "c"}, id=1)
    b.notify("notifications/cancelled", {"requestId": 1}, dir="c2s")  # cancelled
    b.request("subscriptions/listen", {"notifications": {"toolsListChanged": True}}, id=2)
    b.notify("notifications/subscriptions/acknowledged", {"_meta": {SUB: 2}})  # open: closed
    b.request("prompts/get", {"name": "p"}, id=3)
    b.input_required(3, state="s")  # waits for a retry that never comes: not unanswered
    assert found(b.records, "request.unanswered") == []
