"""HTTP conversations: a legacy session per Mcp-Session-Id, modern traffic per origin."""

from __future__ import annotations

from mcpeek.inspector.analysis import analyze
from mcpeek.inspector.testing.records import RecordBuilder


def test_initialize_learns_its_session_from_the_response() -> None:
    b = RecordBuilder("http")
    b.http("x1", "request", method="POST", path="/mcp", headers=[("accept", "*/*")])
    b.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}}, id=1, ch="x1")
    b.http("x1", "response", status=200, headers=[("mcp-session-id", "S1")])
    b.result(1, {"protocolVersion": "2025-11-25", "capabilities": {}}, ch="x1")
    b.http("x1", "end", reason="complete")
    b.http("x2", "request", method="POST", path="/mcp", headers=[("Mcp-Session-Id", "S1")])
    b.request("tools/list", id=2, ch="x2")
    b.http("x2", "response", status=200, headers=[("content-type", "text/event-stream")])
    b.notify("notifications/message", {"level": "info", "data": "listing"}, ch="x2")
    b.result(2, {"tools": []}, ch="x2")
    b.http("x2", "end", reason="complete")
    analyzer = analyze(b.records)
    assert list(analyzer.conversations) == ["http:session:S1"]
    conv = analyzer.conversations["http:session:S1"]
    assert conv.era == "legacy"
    assert analyzer.flows is not None
    init, listing = analyzer.flows
    assert init.status == listing.status == "complete"
    assert len(listing.notifications) == 1  # tied by its SSE stream


def test_modern_requests_share_the_origin_and_a_closed_stream_cancels() -> None:
    b = RecordBuilder("http", modern=True)
    b.http("x1", "request", method="POST", path="/mcp", headers=[])
    b.request("tools/call", {"name": "slow"}, id=1, ch="x1")
    b.http("x1", "response", status=200, headers=[("content-type", "text/event-stream")])
    b.http("x2", "request", method="POST", path="/mcp", headers=[])
    b.request("tools/call", {"name": "fast"}, id=2, ch="x2")
    b.http("x2", "response", status=200, headers=[("content-type", "application/json")])
    b.result(2, {"content": []}, ch="x2")
    b.http("x2", "end", reason="complete")
    b.http("x1", "end", reason="client-closed")
    analyzer = analyze(b.records)
    assert list(analyzer.conversations) == ["http:origin"]
    assert analyzer.flows is not None
    slow, fast = analyzer.flows
    assert fast.status == "complete"
    assert slow.status == "cancelled"


def test_a_legacy_disconnect_is_not_a_cancellation() -> None:
    b = RecordBuilder("http")
    b.http("x1", "request", method="POST", path="/mcp", headers=[])
    b.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}}, id=1, ch="x1")
    b.http("x1", "response", status=200, headers=[("mcp-session-id", "S")])
    b.result(1, {"protocolVersion": "2025-11-25", "capabilities": {}}, ch="x1")
    b.http("x1", "end", reason="complete")
    b.http("x2", "request", method="POST", path="/mcp", headers=[("mcp-session-id", "S")])
    b.request("tools/call", {"name": "slow"}, id=2, ch="x2")
    b.http("x2", "response", status=200, headers=[("content-type", "text/event-stream")])
    b.request("sampling/createMessage", {"messages": []}, id=0, dir="s2c", ch="x2")
    b.notify("notifications/message", {"level": "info", "data": "x"}, ch="x2")
    b.http("x2", "end", reason="client-closed")
    analyzer = analyze(b.records)
    assert analyzer.flows is not None
    call = next(f for f in analyzer.flows if f.method == "tools/call")
    assert call.status == "unanswered"  # not cancelled: legacy disconnects are not
    assert len(call.notifications) == 1  # the log is the call's, not the sampling request's


def test_modern_clients_of_one_origin_may_use_the_same_ids() -> None:
    b = RecordBuilder("http", modern=True)
    for x in ("x1", "x2"):
        b.http(x, "request", method="POST", path="/mcp", headers=[])
        b.request("tools/call", {"name": x}, id=1, ch=x)
        b.http(x, "response", status=200, headers=[("content-type", "text/event-stream")])
    b.result(1, {"content": []}, ch="x2")
    b.result(1, {"content": []}, ch="x1")
    analyzer = analyze(b.records)
    assert analyzer.flows is not None
    assert [(f.name, f.status, f.msgs) for f in analyzer.flows] == [
        ("x1", "complete", [2, 8]),
        ("x2", "complete", [5, 7]),
    ]
