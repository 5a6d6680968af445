"""Planning a replay from a capture: what is sent, in which order, with which ids."""

from __future__ import annotations

from typing import Any

from mcpeek.inspector.analysis import analyze
from mcpeek.inspector.replay.replay_ids import (
    UNSET,
    IdAllocator,
    remap_cancel,
    retry_message,
    with_id,
)
from mcpeek.inspector.replay.replay_plan import ClientStep, HttpStep, ReplayPlan, build_plan
from mcpeek.inspector.testing.records import RecordBuilder


def plan_of(b: RecordBuilder) -> ReplayPlan:
    analyzer = analyze(b.records)
    return build_plan(b.records, analyzer.flows or [], b.header.transport)


def client_steps(plan: ReplayPlan) -> list[ClientStep]:
    return [s for s in plan.steps if isinstance(s, ClientStep)]


def legacy_capture() -> RecordBuilder:
    b = RecordBuilder()
    b.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}}, id=1)
    b.result(1, {"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {}})
    b.notify("notifications/initialized", dir="c2s")
    b.request("tools/call", {"name": "confirm", "arguments": {}}, id=2)
    b.request("elicitation/create", {"message": "Proceed?"}, id=0, dir="s2c")
    b.result(0, {"action": "accept", "content": {"ok": True}}, dir="c2s")
    b.result(2, {"content": [{"type": "text", "text": "confirmed"}]})
    return b


def test_a_legacy_capture_replays_the_handshake_then_the_requests_in_order() -> None:
    plan = plan_of(legacy_capture())
    steps = client_steps(plan)
    assert [(s.kind, s.method) for s in steps] == [
        ("request", "initialize"),
        ("notification", "notifications/initialized"),
        ("request", "tools/call"),
    ]
    assert plan.era == "legacy"
    assert [f.method for f in plan.flows] == ["initialize", "tools/call"]
    assert steps[2].name == "confirm"
    # the client's answer to the server's request is not a step: it is given on demand
    assert plan.answer_for("elicitation/create", {"message": "Proceed?"}) == {
        "result": {"action": "accept", "content": {"ok": True}}
    }
    assert plan.answer_for("sampling/createMessage", {}) is None


def test_the_best_recorded_answer_matches_params_first() -> None:
    b = RecordBuilder()
    b.request("tools/call", {"name": "t"}, id=1)
    b.request("roots/list", {"n": 1}, id="a", dir="s2c")
    b.result("a", {"roots": ["one"]}, dir="c2s")
    b.request("roots/list", {"n": 2}, id="b", dir="s2c")
    b.result("b", {"roots": ["two"]}, dir="c2s")
    b.result(1, {})
    plan = plan_of(b)
    assert plan.answer_for("roots/list", {"n": 2}) == {"result": {"roots": ["two"]}}
    assert plan.answer_for("roots/list", {"n": 9}) == {"result": {"roots": ["one"]}}
    assert plan.answer_for("roots/list", {"n": 9}) == {"result": {"roots": ["two"]}}  # reused


def test_a_server_request_the_recorded_client_never_answered_is_planned_too() -> None:
    b = RecordBuilder(modern=True)
    b.request("tools/call", {"name": "t"}, id=1)
    b.request("notifications/tools/list_changed", id="n1", dir="s2c")  # a bad server's
    b.result(1, {"content": []})
    plan = plan_of(b)
    recorded = plan.recorded_request("notifications/tools/list_changed", None)
    assert recorded is not None and recorded.answer is None  # known, and not answered
    assert plan.answer_for("notifications/tools/list_changed", None) is None
    assert plan.recorded_request("roots/list", None) is None  # never sent at all


def test_a_request_waits_only_when_its_answer_came_before_the_next_client_message() -> None:
    b = RecordBuilder(modern=True)
    b.request("tools/call", {"name": "slow"}, id=1)
    b.request("tools/call", {"name": "fast"}, id=2)  # sent while 1 was in flight
    b.result(2, {"content": []})
    b.notify("notifications/cancelled", {"requestId": 1}, dir="c2s")
    b.request("tools/list", id=3)
    b.result(3, {"tools": []})
    steps = client_steps(plan_of(b))
    assert [(s.method, s.wait) for s in steps] == [
        ("tools/call", False),
        ("tools/call", True),
        ("notifications/cancelled", True),
        ("tools/list", True),
    ]


def test_mrtr_attempts_are_steps_of_one_flow() -> None:
    b = RecordBuilder(modern=True)
    b.request("tools/call", {"name": "confirm"}, id=1)
    b.input_required(1, state="recorded-state", requests={"ask": {"method": "elicitation/create"}})
    b.request(
        "tools/call",
        {"name": "confirm", "requestState": "recorded-state", "inputResponses": {"ask": {}}},
        id=2,
    )
    b.result(2, {"content": []})
    plan = plan_of(b)
    steps = client_steps(plan)
    assert [(s.attempt, s.wait) for s in steps] == [(0, True), (1, True)]
    assert steps[0].flow is steps[1].flow and len(plan.flows) == 1


def test_http_steps_keep_their_recorded_headers_and_sessions() -> None:
    b = RecordBuilder("http")
    b.http("x1", "request", method="POST", path="/mcp", headers=[("accept", "*/*")])
    b.request("initialize", {"protocolVersion": "2025-11-25"}, id=1, ch="x1")
    b.http("x1", "response", status=200, headers=[("mcp-session-id", "S-rec")])
    b.result(1, {"protocolVersion": "2025-11-25"}, ch="x1")
    b.http("x1", "end", reason="complete")
    headers = [("mcp-session-id", "S-rec"), ("mcp-protocol-version", "2025-11-25")]
    b.http("x2", "request", method="GET", path="/mcp", headers=headers)
    b.http("x3", "request", method="POST", path="/mcp", headers=headers)
    b.request("tools/list", id=2, ch="x3")
    b.http("x3", "response", status=200, headers=[("content-type", "application/json")])
    b.result(2, {"tools": []}, ch="x3")
    b.http("x4", "request", method="DELETE", path="/mcp", headers=headers)
    plan = plan_of(b)
    kinds = [(type(s).__name__, getattr(s, "method", None)) for s in plan.steps]
    assert kinds == [
        ("ClientStep", "initialize"),
        ("HttpStep", "GET"),
        ("ClientStep", "tools/list"),
        ("HttpStep", "DELETE"),
    ]
    init, get, tools_list = plan.steps[0], plan.steps[1], plan.steps[2]
    assert isinstance(init, ClientStep) and init.issued_session == "S-rec"
    assert isinstance(get, HttpStep) and get.session == "S-rec"
    assert isinstance(tools_list, ClientStep) and tools_list.session == "S-rec"
    assert ("mcp-protocol-version", "2025-11-25") in tools_list.headers


def test_an_exchange_the_proxy_refused_is_not_replayed() -> None:
    b = RecordBuilder("http")
    headers = [("origin", "http://evil.example")]
    b.http("x1", "request", method="GET", path="/mcp", headers=headers)
    b.http("x1", "response", status=403, headers=[("content-type", "text/plain")])
    b.http("x1", "end", reason="refused", body="mcpeek: forbidden: ...")
    b.http("x2", "request", method="DELETE", path="/mcp", headers=[])
    plan = plan_of(b)
    assert [(type(s).__name__, getattr(s, "method", None)) for s in plan.steps] == [
        ("HttpStep", "DELETE")
    ]


def test_a_recorded_header_kept_as_base64_is_not_sent_but_noted() -> None:
    b = RecordBuilder("http")
    headers = [("accept", "*/*"), ("x-weird", "//4="), ("x-ok", "1")]  # b"\xff\xfe"
    b.http("x1", "request", method="POST", path="/mcp", headers=headers, headers_b64=[1])
    b.request("tools/list", id=1, ch="x1")
    b.result(1, {"tools": []}, ch="x1")
    plan = plan_of(b)
    (step,) = client_steps(plan)
    assert step.headers == [("accept", "*/*"), ("x-ok", "1")]  # not the Base64 text
    assert plan.notes == ["header x-weird holds bytes that are not UTF-8: not sent"]


def test_batches_and_garbage_are_noted_not_sent() -> None:
    b = RecordBuilder()
    b.raw('[{"jsonrpc":"2.0","id":1,"method":"ping"}]')
    b.raw("not json")
    b.request("ping", id=2)
    b.result(2, {})
    plan = plan_of(b)
    assert [s.method for s in client_steps(plan)] == ["ping"]
    assert len(plan.notes) == 2 and "batch" in plan.notes[0]


def test_ids_are_renumbered_and_never_reused() -> None:
    ids = IdAllocator()
    assert [ids.allocate(7), ids.allocate("7"), ids.allocate(7)] == [1, 2, 3]
    assert ids.live_id(7) == 3 and ids.live_id("7") == 2 and ids.live_id(8) is None
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": 7, "method": "ping"}
    assert with_id(message, 3) == {"jsonrpc": "2.0", "id": 3, "method": "ping"}
    assert message["id"] == 7  # the recorded message is left alone


def test_a_retry_carries_the_live_request_state() -> None:
    recorded = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "c", "requestState": "old", "inputResponses": {"ask": {"ok": 1}}},
    }
    retry = retry_message(recorded, 11, "live-state")
    assert retry["id"] == 11
    assert retry["params"] == {
        "name": "c",
        "requestState": "live-state",
        "inputResponses": {"ask": {"ok": 1}},
    }
    assert "requestState" not in retry_message(recorded, 12, UNSET)["params"]
    assert recorded["params"]["requestState"] == "old"  # type: ignore[index]


def test_a_cancellation_names_the_live_id() -> None:
    ids = IdAllocator()
    ids.allocate("r1")
    live = ids.allocate("r2")
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "r2"}}
    assert remap_cancel(cancel, ids)["params"] == {"requestId": live}


def test_a_message_nested_too_deep_is_not_replayed() -> None:
    b = RecordBuilder()
    b.raw('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":' + "[" * 5000 + "]" * 5000 + "}")
    # Decodable, but deeper than replay copies and compares (recursively).
    b.raw(
        '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":' + '{"a":' * 600 + "1" + "}" * 601
    )
    b.request("ping", id=3)
    plan = plan_of(b)
    assert [s.message["id"] for s in client_steps(plan)] == [3]
    assert plan.notes == [
        "message #1 is nested too deeply: not replayed",
        "message #2 is nested too deeply: not replayed",
    ]
