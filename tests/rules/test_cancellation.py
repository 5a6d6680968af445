"""Cancellation rules: cancel.* (unknown requests, server-sent cancels, answers after)."""

from __future__ import annotations

from mcpeek.inspector.testing.records import RecordBuilder
from mcpeek.rules.testing import fired
from tests.rules.test_subscriptions import ACK, family, legacy_handshake, tagged


def test_cancel_of_an_unknown_request_is_info() -> None:
    b = RecordBuilder(modern=True)
    cancel = b.notify("notifications/cancelled", {"requestId": 42}, dir="c2s")
    (v,) = fired(b.records, "cancel.unknown-request")
    assert v.severity == "info" and v.msgs == [cancel.seq]
    assert "id 42" in v.message


def test_cancel_of_an_answered_request_is_info() -> None:
    b = RecordBuilder(modern=True)
    b.request("tools/call", {"name": "x"}, id=1)
    res = b.result(1, {"content": []})
    cancel = b.notify("notifications/cancelled", {"requestId": 1}, dir="c2s")
    (v,) = fired(b.records, "cancel.unknown-request")
    assert v.msgs == [res.seq, cancel.seq] and "already answered" in v.message


def test_cancel_after_the_inspector_timeout_is_still_in_flight() -> None:
    b = RecordBuilder(modern=True)
    b.request("tools/call", {"name": "x"}, id=1)
    b.wait(120)
    b.request("tools/call", {"name": "y"}, id=2)
    b.notify("notifications/cancelled", {"requestId": 1, "reason": "timeout"}, dir="c2s")
    assert fired(b.records, "cancel.unknown-request") == []


def test_server_cancels_something_other_than_a_listen_stream() -> None:
    b = RecordBuilder(modern=True)
    b.request("tools/call", {"name": "x"}, id=1)
    b.request("tools/list", id=2)
    b.result(2, {"tools": []})  # a result with resultType: the server is modern
    bad = b.notify("notifications/cancelled", {"requestId": 1})
    (v,) = fired(b.records, "cancel.server-sent")
    assert v.msgs == [bad.seq] and "not a subscriptions/listen request" in v.message
    assert fired(b.records, "cancel.unknown-request") == []  # one report is enough


def test_server_tears_down_a_listen_stream() -> None:
    b = RecordBuilder(modern=True)
    b.request("subscriptions/listen", {"notifications": {}}, id="L")
    b.notify(ACK, tagged("L", notifications={}))
    b.result("L", tagged("L"))  # graceful end…
    b.notify("notifications/cancelled", {"requestId": "L"})  # …and the teardown
    assert family(b.records) == []


def test_legacy_server_cancel_is_not_judged_as_modern() -> None:
    b = RecordBuilder()
    legacy_handshake(b)
    b.request("roots/list", id=5, dir="s2c")
    b.notify("notifications/cancelled", {"requestId": 5})
    assert fired(b.records, "cancel.server-sent") == []


def test_response_after_cancel() -> None:
    b = RecordBuilder(modern=True)
    req = b.request("tools/call", {"name": "slow"}, id=7)
    cancel = b.notify("notifications/cancelled", {"requestId": 7}, dir="c2s")
    res = b.result(7, {"content": []})
    (v,) = fired(b.records, "cancel.response-after-cancel")
    assert v.severity == "warning"
    assert v.msgs == [req.seq, cancel.seq, res.seq]
    assert "tools/call (id 7) after the client cancelled it" in v.message


def test_response_before_cancel_is_fine() -> None:
    b = RecordBuilder(modern=True)
    b.request("tools/call", {"name": "slow"}, id=7)
    b.result(7, {"content": []})
    b.notify("notifications/cancelled", {"requestId": 7}, dir="c2s")
    assert fired(b.records, "cancel.response-after-cancel") == []


def test_a_second_cancel_of_the_same_request_is_info() -> None:
    b = RecordBuilder(modern=True)
    b.request("tools/call", {"name": "slow"}, id=7)
    first = b.notify("notifications/cancelled", {"requestId": 7}, dir="c2s")
    again = b.notify("notifications/cancelled", {"requestId": 7}, dir="c2s")
    (v,) = fired(b.records, "cancel.unknown-request")
    assert v.msgs == [first.seq, again.seq] and "already cancelled" in v.message


def test_response_after_cancel_of_a_reused_id_is_not_confused() -> None:
    b = RecordBuilder(modern=True)
    b.request("tools/call", {"name": "a"}, id=7)
    b.result(7, {"content": []})
    b.notify("notifications/cancelled", {"requestId": 7}, dir="c2s")  # too late: info only
    b.request("tools/call", {"name": "b"}, id=7)  # the id is free again
    b.result(7, {"content": []})
    assert fired(b.records, "cancel.response-after-cancel") == []
