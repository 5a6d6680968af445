"""An HTTP request is in flight as soon as it is recorded, before the response head:
a 2026-07-28 server answering ``application/json`` sends its head only when the call
is done, so a held call must show as pending (and slow) while the server works."""

from __future__ import annotations

from mcpeek.inspector.analysis import Analyzer, Flow
from mcpeek.inspector.testing.records import RecordBuilder
from mcpeek.inspector.views.in_flight import InFlight, SlowCalls

INIT = {"protocolVersion": "2025-11-25", "capabilities": {}}


def watched(b: RecordBuilder) -> tuple[Analyzer, InFlight, list[tuple[Flow, float]]]:
    in_flight = InFlight()
    analyzer = Analyzer([in_flight], keep_flows=True)
    analyzer.feed_all(b.records)
    return analyzer, in_flight, []


def test_a_modern_call_without_its_response_head_is_pending_and_slow() -> None:
    b = RecordBuilder("http", modern=True)
    b.http("x1", "request", method="POST", path="/mcp", headers=[("mcp-method", "tools/call")])
    sent = b.request("tools/call", {"name": "hang", "arguments": {}}, id=1, ch="x1")
    analyzer, in_flight, told = watched(b)
    assert analyzer.flows is not None
    (flow,) = analyzer.flows
    assert (flow.status, flow.name, flow.conversation) == ("pending", "hang", "http:origin")
    assert in_flight.flows() == [flow]
    calls = SlowCalls(analyzer, in_flight, 5.0, lambda f, waited: told.append((f, waited)))
    calls.tick(sent.t + 4.0)
    assert told == []
    calls.tick(sent.t + 6.0)
    assert [(f.name, round(w, 3)) for f, w in told] == [("hang", 6.0)]
    b.http("x1", "response", status=200, headers=[("content-type", "application/json")])
    calls.feed(b.last)
    b.result(1, {"content": []}, ch="x1")
    calls.feed(b.last)
    assert flow.status == "complete" and len(in_flight) == 0


def test_a_legacy_call_in_its_session_is_pending_before_the_response_head() -> None:
    b = RecordBuilder("http")
    b.http("x1", "request", method="POST", path="/mcp", headers=[])
    b.request("initialize", INIT, id=1, ch="x1")
    b.http("x1", "response", status=200, headers=[("mcp-session-id", "S1")])
    b.result(1, INIT, ch="x1")
    b.http("x1", "end", reason="complete")
    b.http("x2", "request", method="POST", path="/mcp", headers=[("Mcp-Session-Id", "S1")])
    sent = b.request("tools/call", {"name": "hang", "arguments": {}}, id=2, ch="x2")
    analyzer, in_flight, told = watched(b)
    assert analyzer.flows is not None
    call = analyzer.flows[-1]
    assert (call.status, call.name, call.conversation) == ("pending", "hang", "http:session:S1")
    assert [f.name for f in in_flight.flows()] == ["hang"]
    calls = SlowCalls(analyzer, in_flight, 0.5, lambda f, waited: told.append((f, waited)))
    calls.tick(sent.t + 1.0)
    assert [f.name for f, _ in told] == ["hang"]


def test_an_initialize_without_a_session_still_waits_for_its_session() -> None:
    b = RecordBuilder("http")
    b.http("x1", "request", method="POST", path="/mcp", headers=[])
    b.request("initialize", INIT, id=1, ch="x1")
    analyzer, in_flight, _ = watched(b)
    assert analyzer.flows == [] and len(in_flight) == 0  # its conversation is not known yet
    b.http("x1", "response", status=200, headers=[("mcp-session-id", "S1")])
    analyzer.feed(b.last)
    assert list(analyzer.conversations) == ["http:session:S1"]
    assert [f.method for f in in_flight.flows()] == ["initialize"]
