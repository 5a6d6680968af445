"""Subscription rules (subscription.*), conformant traffic for the progress, cancellation and
subscription families, and the helpers their tests share."""

from __future__ import annotations

from typing import Any

from mcpeek.inspector.records import AnyRecord
from mcpeek.inspector.testing.records import RecordBuilder
from mcpeek.rules.engine import Reported
from mcpeek.rules.testing import fired, lint_records

FAMILY = ("progress.", "cancel.", "subscription.")
SUB = "io.modelcontextprotocol/subscriptionId"


def family(records: list[AnyRecord]) -> list[Reported]:
    return [v for v in lint_records(records) if v.rule.startswith(FAMILY)]


def tagged(sub: Any, **params: Any) -> dict[str, Any]:
    return {"_meta": {SUB: sub}, **params}


def legacy_handshake(b: RecordBuilder) -> None:
    b.request(
        "initialize",
        {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c"}},
        id=0,
    )
    b.result(0, {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}})
    b.notify("notifications/initialized", dir="c2s")


# -- conformant conversations ------------------------------------------------------------


def test_conformant_modern_conversation_is_clean() -> None:
    b = RecordBuilder(modern=True)
    b.request("tools/call", {"name": "count"}, id=1, meta={"progressToken": "t"})
    b.notify("notifications/progress", {"progressToken": "t", "progress": 0.5, "total": 1})
    b.notify("notifications/progress", {"progressToken": "t", "progress": 1, "total": 1})
    b.result(1, {"content": []})
    filt = {"toolsListChanged": True, "resourceSubscriptions": ["file:///p"]}
    b.request("subscriptions/listen", {"notifications": filt}, id="L")
    b.notify(ACK, tagged("L", notifications=filt))
    b.notify("notifications/tools/list_changed", tagged("L"))
    b.notify("notifications/resources/updated", tagged("L", uri="file:///p/sub/file.txt"))
    b.request("tools/call", {"name": "slow"}, id=2)
    b.notify("notifications/cancelled", {"requestId": 2, "reason": "user"}, dir="c2s")
    b.notify("notifications/cancelled", {"requestId": "L"}, dir="c2s")
    assert family(b.records) == []


def test_conformant_legacy_conversation_is_clean() -> None:
    b = RecordBuilder()
    legacy_handshake(b)
    b.request("tools/call", {"name": "count", "_meta": {"progressToken": 1}}, id=1)
    for i in (1, 2, 3):
        b.notify("notifications/progress", {"progressToken": 1, "progress": i})
    b.result(1, {"content": []})
    b.notify("notifications/tools/list_changed")  # legacy: no listen stream needed
    b.request(
        "sampling/createMessage", {"messages": [], "_meta": {"progressToken": "s"}}, id=9, dir="s2c"
    )
    b.notify("notifications/progress", {"progressToken": "s", "progress": 1}, dir="c2s")
    b.notify("notifications/cancelled", {"requestId": 9}, dir="s2c")  # legacy: either side
    assert family(b.records) == []


ACK = "notifications/subscriptions/acknowledged"


# -- progress ----------------------------------------------------------------------------


# -- cancellation -------------------------------------------------------------------------


# -- subscriptions --------------------------------------------------------------------------


def test_notification_before_the_acknowledgment() -> None:
    b = RecordBuilder(modern=True)
    listen = b.request("subscriptions/listen", {"notifications": {"toolsListChanged": True}}, id=1)
    b.request("subscriptions/listen", {"notifications": {"toolsListChanged": True}}, id=2)
    b.notify(ACK, tagged(2, notifications={"toolsListChanged": True}))  # the other one
    early = b.notify("notifications/tools/list_changed", tagged(1))
    b.notify(ACK, tagged(1, notifications={"toolsListChanged": True}))
    b.notify("notifications/tools/list_changed", tagged(1))
    b.notify("notifications/tools/list_changed", tagged(2))
    (v,) = fired(b.records, "subscription.ack-not-first")
    assert v.msgs == [listen.seq, early.seq]


def test_stdio_change_notification_without_subscription_id() -> None:
    b = RecordBuilder(modern=True)
    listen = b.request("subscriptions/listen", {"notifications": {"toolsListChanged": True}}, id=1)
    b.notify(ACK, tagged(1, notifications={"toolsListChanged": True}))
    bare = b.notify("notifications/tools/list_changed")
    (v,) = fired(b.records, "subscription.id-missing")
    assert v.msgs == [listen.seq, bare.seq]
    assert fired(b.records, "subscription.not-requested") == []


def test_http_notification_on_the_listen_stream_without_subscription_id() -> None:
    b = RecordBuilder("http", modern=True)
    b.http("x1", "request", method="POST", path="/mcp")
    listen = b.request(
        "subscriptions/listen", {"notifications": {"toolsListChanged": True}}, id=1, ch="x1"
    )
    b.http("x1", "response", status=200, headers=[("Content-Type", "text/event-stream")])
    b.notify(ACK, {"notifications": {"toolsListChanged": True}}, ch="x1")
    b.notify("notifications/tools/list_changed", tagged(1), ch="x1")
    found = fired(b.records, "subscription.id-missing")
    assert [v.msgs for v in found] == [[listen.seq, listen.seq + 2]]


def test_change_notification_not_in_the_filter() -> None:
    b = RecordBuilder(modern=True)
    filt = {"toolsListChanged": True, "resourceSubscriptions": ["file:///a"]}
    listen = b.request("subscriptions/listen", {"notifications": filt}, id=1)
    b.notify(ACK, tagged(1, notifications=filt))
    b.notify("notifications/tools/list_changed", tagged(1))
    prompts = b.notify("notifications/prompts/list_changed", tagged(1))
    b.notify("notifications/resources/updated", tagged(1, uri="file:///a"))
    other = b.notify("notifications/resources/updated", tagged(1, uri="file:///ab"))
    found = fired(b.records, "subscription.not-requested")
    assert [v.msgs for v in found] == [[listen.seq, prompts.seq], [listen.seq, other.seq]]
    assert "promptsListChanged" in found[0].message
    assert "file:///ab" in found[1].message


def test_modern_change_notification_with_no_listen_stream() -> None:
    b = RecordBuilder(modern=True)
    b.request("tools/list", id=1)
    b.result(1, {"tools": []})
    bare = b.notify("notifications/tools/list_changed")
    stray = b.notify("notifications/tools/list_changed", tagged(99))
    found = fired(b.records, "subscription.not-requested")
    assert [v.msgs for v in found] == [[bare.seq], [stray.seq]]
    assert "99" in found[1].message


def test_change_notification_racing_the_client_cancel_is_fine() -> None:
    b = RecordBuilder(modern=True)
    b.request("subscriptions/listen", {"notifications": {"toolsListChanged": True}}, id=1)
    b.notify(ACK, tagged(1, notifications={"toolsListChanged": True}))
    b.notify("notifications/cancelled", {"requestId": 1}, dir="c2s")
    b.notify("notifications/tools/list_changed", tagged(1))  # crossed the cancel
    assert family(b.records) == []


def test_request_scoped_notifications_on_a_listen_stream() -> None:
    b = RecordBuilder(modern=True)
    b.request("subscriptions/listen", {"notifications": {"toolsListChanged": True}}, id=1)
    b.notify(ACK, tagged(1, notifications={"toolsListChanged": True}))
    b.request("tools/call", {"name": "x"}, id=2, meta={"io.modelcontextprotocol/logLevel": "info"})
    log = b.notify("notifications/message", tagged(1, level="info", data="x"))
    b.notify("notifications/message", {"level": "info", "data": "fine"})  # request-scoped
    (v,) = fired(b.records, "subscription.request-scoped")
    assert v.msgs == [log.seq] and "notifications/message" in v.message


def test_http_progress_on_the_listen_stream() -> None:
    b = RecordBuilder("http", modern=True)
    b.http("x1", "request", method="POST", path="/mcp")
    b.request("subscriptions/listen", {"notifications": {"toolsListChanged": True}}, id=1, ch="x1")
    b.http("x1", "response", status=200, headers=[("Content-Type", "text/event-stream")])
    b.notify(ACK, tagged(1, notifications={"toolsListChanged": True}), ch="x1")
    b.http("x2", "request", method="POST", path="/mcp")
    b.request("tools/call", {"name": "x"}, id=2, ch="x2", meta={"progressToken": "p"})
    b.http("x2", "response", status=200, headers=[("Content-Type", "text/event-stream")])
    b.notify("notifications/progress", {"progressToken": "p", "progress": 1}, ch="x2")  # fine
    bad = b.notify("notifications/progress", {"progressToken": "p", "progress": 2}, ch="x1")
    (v,) = fired(b.records, "subscription.request-scoped")
    assert v.msgs[-1] == bad.seq and "listen stream" in v.message


def test_a_notification_named_subscriptions_listen_crashes_no_rule() -> None:
    # Found by the robustness test: the filter rule looked the method up as a change
    # notification and raised KeyError.
    b = RecordBuilder(modern=True)
    b.request("server/discover", {}, id=1)
    b.result(1, {"supportedVersions": ["2026-07-28"], "capabilities": {}})
    b.notify("subscriptions/listen", {})
    assert [v.rule for v in lint_records(b.records) if v.rule == "inspector.rule-crashed"] == []
