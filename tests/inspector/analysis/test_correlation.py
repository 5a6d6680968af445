"""Correlation from built records, no sockets: pairing, chains, notifications, eras."""

from __future__ import annotations

from mcpeek.inspector.analysis import Analyzer, analyze
from mcpeek.inspector.analysis.flow import Flow
from mcpeek.inspector.analysis.peek import UNREAD, UNSET
from mcpeek.inspector.testing.records import RecordBuilder


def flows_of(b: RecordBuilder, **kw: float) -> list[Flow]:
    flows = analyze(b.records, **kw).flows
    assert flows is not None
    return flows


def by_status(flows: list[Flow]) -> dict[str, list[Flow]]:
    out: dict[str, list[Flow]] = {}
    for flow in flows:
        out.setdefault(flow.status, []).append(flow)
    return out


def test_request_pairs_with_its_response() -> None:
    b = RecordBuilder()
    req = b.request("tools/call", {"name": "get_weather", "arguments": {}}, id=3)
    b.wait(0.0123)
    res = b.result(3, {"content": []})
    (flow,) = flows_of(b)
    assert flow.status == "complete"
    assert flow.method == "tools/call" and flow.name == "get_weather"
    assert flow.ids == [3] and flow.msgs == [req.seq, res.seq]
    assert flow.latency_ms is not None and 12.0 < flow.latency_ms < 15.0


def test_integer_and_string_ids_do_not_pair() -> None:
    b = RecordBuilder()
    b.request("ping", id=1)
    b.result("1")
    flows = flows_of(b)
    statuses = {f.status for f in flows}
    assert statuses == {"unanswered", "orphan"}


def test_orphan_duplicate_and_legal_reuse() -> None:
    b = RecordBuilder()
    b.result(99)  # answers nothing
    b.request("ping", id=1)
    b.result(1)
    b.result(1)  # answered twice
    b.request("ping", id=1)  # reuse after the answer: legal, a new flow
    b.result(1)
    flows = flows_of(b)
    assert [f.status for f in flows] == ["orphan", "complete", "complete"]
    assert len(flows[1].attempts[0].duplicates) == 1
    assert flows[2].msgs != flows[1].msgs


def test_a_request_notes_an_earlier_one_with_its_id_still_in_flight() -> None:
    # What id.reused reads: by sender, unanswered and not cancelled (an overdue
    # request included, though correlation retired it), with its method and seq.
    b = RecordBuilder()
    first = b.request("tools/call", {"name": "slow"}, id=1)
    b.request("ping", id=1)  # first is in flight
    b.result(1)  # answers the ping; first is in flight again
    b.request("ping", id=1, dir="s2c")  # the server's own id 1
    b.result(1, dir="c2s")
    b.wait(120)  # first is overdue now
    b.request("ping", id=1)
    b.request("ping", id=2)
    b.notify("notifications/cancelled", {"requestId": 2}, dir="c2s")
    b.request("ping", id=2)  # cancelled: free again
    attempts = [a for f in flows_of(b, timeout=60.0) for a in f.attempts]
    noted = [(a.request.dir, a.request.id, a.id_in_flight) for a in attempts]
    assert noted == [
        ("c2s", 1, None),
        ("c2s", 1, ("tools/call", first.seq)),
        ("s2c", 1, None),
        ("c2s", 1, ("tools/call", first.seq)),
        ("c2s", 2, None),
        ("c2s", 2, None),
    ]


def test_a_request_notes_whether_its_meta_names_a_log_level() -> None:
    b = RecordBuilder(modern=True)
    level = "io.modelcontextprotocol/logLevel"
    b.request("tools/call", {"name": "a"}, id=1, meta={level: "debug"})
    b.request("tools/call", {"name": "a"}, id=2, meta={level: None})
    b.request("tools/call", {"name": "a"}, id=3)
    b.raw('{"jsonrpc":"2.0","id":4,"method":"ping","params":{"_meta":5}}')  # not an object
    # a duplicate _meta: the peek cannot read it, a careful decode (the last one wins) can
    b.raw(
        '{"jsonrpc":"2.0","id":5,"method":"ping","params":{"_meta":"x",'
        '"_meta":{"io.modelcontextprotocol/logLevel":"info"}}}'
    )
    levels = [f.attempts[0].log_level for f in flows_of(b)]
    assert levels == [True, None, UNSET, UNSET, UNREAD]


def test_unanswered_at_end_and_listen_closed() -> None:
    b = RecordBuilder(modern=True)
    b.request("tools/call", {"name": "slow"}, id=1)
    b.request("subscriptions/listen", {"notifications": {"toolsListChanged": True}}, id=2)
    flows = flows_of(b)
    assert [f.status for f in flows] == ["unanswered", "closed"]


def test_timeout_then_late_answer_is_still_paired() -> None:
    b = RecordBuilder()
    b.request("tools/call", {"name": "slow"}, id=1)
    b.wait(5)
    b.request("ping", id=2)
    b.result(2)
    b.wait(120)
    b.notify("notifications/message", {"level": "info", "data": "tick"})
    b.result(1, {"content": []})
    ended: list[tuple[int, str, bool]] = []

    from mcpeek.inspector.analysis import AnalysisListener

    class Ends(AnalysisListener):
        def on_flow_end(self, flow, conversation):  # type: ignore[no-untyped-def]
            ended.append((flow.number, flow.status, flow.late))

    analyzer = Analyzer([Ends()], timeout=60, keep_flows=True)
    analyzer.feed_all(b.records)
    analyzer.finish()
    assert (1, "unanswered", False) in ended
    assert ended[-1] == (1, "complete", True)
    assert analyzer.flows is not None and analyzer.flows[0].latency_ms > 120_000


def test_progress_is_tied_by_token_in_order() -> None:
    b = RecordBuilder(modern=True)
    b.request("tools/call", {"name": "count"}, id=4, meta={"progressToken": "tok"})
    b.request("tools/call", {"name": "other"}, id=5, meta={"progressToken": 5})
    for i in (1, 2, 3):
        b.notify("notifications/progress", {"progressToken": "tok", "progress": i})
    b.notify("notifications/progress", {"progressToken": 5, "progress": 1})
    b.notify("notifications/progress", {"progressToken": "nope", "progress": 1})
    b.result(4)
    b.result(5)
    flows = flows_of(b)
    count, other, stray = flows
    assert count.progress_count == 3 and other.progress_count == 1
    assert [e.seq for e in count.notifications] == sorted(e.seq for e in count.notifications)
    assert stray.status == "orphan" and stray.method == "notifications/progress"


def test_progress_after_response_stays_with_its_flow() -> None:
    b = RecordBuilder(modern=True)
    b.request("tools/call", {"name": "count"}, id=1, meta={"progressToken": 1})
    b.result(1)
    b.notify("notifications/progress", {"progressToken": 1, "progress": 9})
    (flow,) = flows_of(b)
    assert flow.progress_count == 1


def test_cancel_then_response_race() -> None:
    b = RecordBuilder(modern=True)
    b.request("tools/call", {"name": "slow"}, id=7)
    b.notify("notifications/cancelled", {"requestId": 7, "reason": "user"}, dir="c2s")
    b.result(7, {"content": []})  # crossed the cancellation on the wire
    (flow,) = flows_of(b)
    assert flow.status == "cancelled"
    assert flow.cancel is not None and flow.response is not None and flow.late


def test_cancel_of_unknown_request_is_its_own_row() -> None:
    b = RecordBuilder(modern=True)
    b.notify("notifications/cancelled", {"requestId": 42}, dir="c2s")
    (flow,) = flows_of(b)
    assert flow.status == "notification"


def test_mrtr_chain_is_one_logical_flow() -> None:
    b = RecordBuilder(modern=True)
    elicit = {"login": {"method": "elicitation/create", "params": {"message": "who?"}}}
    b.request("tools/call", {"name": "deploy", "arguments": {}}, id=1)
    b.input_required(1, state="s1", requests=elicit)
    b.request("tools/call", {"name": "unrelated"}, id=2)
    b.result(2)
    b.request(
        "tools/call",
        {
            "name": "deploy",
            "arguments": {},
            "requestState": "s1",
            "inputResponses": {"login": {"action": "accept"}},
        },
        id=3,
    )
    b.input_required(3, state="s2", requests=elicit)  # asks again
    b.request(
        "tools/call",
        {
            "name": "deploy",
            "arguments": {},
            "requestState": "s2",
            "inputResponses": {"login": {"action": "accept"}},
        },
        id=4,
    )
    b.wait(0.05)
    b.result(4, {"content": []})
    flows = flows_of(b)
    deploy = next(f for f in flows if f.name == "deploy")
    assert deploy.status == "complete"
    assert deploy.ids == [1, 3, 4] and deploy.chain == [1, 3, 4]
    assert [a.result_type for a in deploy.attempts] == [
        "input_required",
        "input_required",
        "complete",
    ]
    assert deploy.attempts[1].request_state == "s1"
    assert deploy.attempts[0].issued_state == "s1"
    assert all(a.latency_ms is not None for a in deploy.attempts)
    assert deploy.latency_ms is not None and deploy.latency_ms > 50
    assert [f.name for f in flows] == ["deploy", "unrelated"]


def test_mrtr_left_waiting_ends_input_required() -> None:
    b = RecordBuilder(modern=True)
    b.request("prompts/get", {"name": "p"}, id=1)
    b.input_required(1, state="x")
    (flow,) = flows_of(b)
    assert flow.status == "input_required"


def test_two_listen_streams_on_stdio() -> None:
    b = RecordBuilder(modern=True)
    b.request("subscriptions/listen", {"notifications": {"toolsListChanged": True}}, id=1)
    b.request("subscriptions/listen", {"notifications": {"resourceSubscriptions": ["f://a"]}}, id=2)
    sub = "io.modelcontextprotocol/subscriptionId"
    b.notify("notifications/subscriptions/acknowledged", {"_meta": {sub: 2}})
    b.notify("notifications/subscriptions/acknowledged", {"_meta": {sub: 1}})
    b.notify("notifications/tools/list_changed", {"_meta": {sub: 1}})
    b.notify("notifications/resources/updated", {"_meta": {sub: 2}, "uri": "f://a"})
    b.notify("notifications/resources/updated", {"_meta": {sub: 2}, "uri": "f://a"})
    b.notify("notifications/cancelled", {"requestId": 1}, dir="c2s")
    b.notify("notifications/tools/list_changed", {"_meta": {sub: 9}})
    flows = flows_of(b)
    one, two, stray = flows
    assert [e.method for e in one.notifications] == [
        "notifications/subscriptions/acknowledged",
        "notifications/tools/list_changed",
    ]
    assert len(two.notifications) == 3
    assert one.status == "cancelled" and two.status == "closed"
    assert stray.status == "orphan"


def test_server_teardown_of_a_listen_stream() -> None:
    b = RecordBuilder(modern=True)
    b.request("subscriptions/listen", {"notifications": {}}, id="L")
    b.notify("notifications/cancelled", {"requestId": "L"})  # server side
    (flow,) = flows_of(b)
    assert flow.status == "cancelled" and flow.cancel is not None


def test_log_message_goes_to_the_one_request_in_flight() -> None:
    b = RecordBuilder(modern=True)
    b.request("tools/call", {"name": "x"}, id=1, meta={"io.modelcontextprotocol/logLevel": "info"})
    b.notify("notifications/message", {"level": "info", "data": "working"})
    b.result(1)
    b.notify("notifications/message", {"level": "info", "data": "later"})
    first, alone = flows_of(b)
    assert len(first.notifications) == 1
    assert alone.status == "notification"


def test_legacy_server_requests_pair_with_client_responses() -> None:
    b = RecordBuilder()
    b.request(
        "initialize",
        {
            "protocolVersion": "2025-11-25",
            "capabilities": {"sampling": {}},
            "clientInfo": {"name": "c", "version": "1"},
        },
        id=0,
    )
    b.result(
        0,
        {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "s", "version": "2"},
        },
    )
    b.notify("notifications/initialized", dir="c2s")
    b.request("tools/call", {"name": "t"}, id=1)
    b.request("sampling/createMessage", {"messages": []}, id=1, dir="s2c")  # same id, other side
    b.request("ping", id="p", dir="s2c")
    b.result("p", dir="c2s")
    b.result(1, {"role": "assistant"}, dir="c2s")
    b.result(1, {"content": []})
    flows = flows_of(b)
    methods = {(f.method, f.sender): f.status for f in flows}
    assert methods[("sampling/createMessage", "s2c")] == "complete"
    assert methods[("ping", "s2c")] == "complete"
    assert methods[("tools/call", "c2s")] == "complete"
    assert methods[("notifications/initialized", "c2s")] == "notification"


def test_era_detection_and_declarations() -> None:
    modern = RecordBuilder(modern=True)
    modern.request("server/discover", id=1)
    modern.result(
        1,
        {
            "supportedVersions": ["2026-07-28"],
            "capabilities": {"tools": {}},
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "s"}},
        },
    )
    modern.request("tools/list", id=2)
    modern.result(
        2,
        {
            "tools": [{"name": "a", "inputSchema": {"type": "object"}}],
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "s"}},
        },
    )
    analyzer = analyze(modern.records)
    (conv,) = analyzer.conversations.values()
    assert conv.era == "modern" and conv.protocol_version == "2026-07-28"
    assert conv.declared.server_capabilities == {"tools": {}}
    assert conv.declared.server_info == {"name": "s"}
    assert conv.declared.client_info == {"name": "test-client", "version": "1.0"}
    assert set(conv.declared.tools) == {"a"}
    assert analyzer.flows is not None and {f.era for f in analyzer.flows} == {"modern"}


def test_dual_era_probe_then_legacy() -> None:
    b = RecordBuilder()
    b.request(
        "server/discover",
        id=1,
        meta={
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
        },
    )
    b.error(1, -32601, "Method not found")
    b.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}}, id=2)
    b.result(2, {"protocolVersion": "2025-06-18", "capabilities": {}})
    analyzer = analyze(b.records)
    (conv,) = analyzer.conversations.values()
    assert conv.era == "legacy" and conv.protocol_version == "2025-06-18"
    assert [era for _, era, _ in conv.declared.changes] == ["modern", "legacy", "legacy"]
    assert analyzer.flows is not None
    assert [f.era for f in analyzer.flows] == ["modern", "legacy"]


def test_batch_members_each_correlate() -> None:
    b = RecordBuilder()
    b.raw('[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","id":2,"method":"b"}]')
    b.raw('[{"jsonrpc":"2.0","id":2,"result":{}},{"jsonrpc":"2.0","id":1,"result":{}}]', "s2c")
    flows = flows_of(b)
    assert [f.status for f in flows] == ["complete", "complete"]


def test_invalid_messages_become_orphan_rows() -> None:
    b = RecordBuilder()
    b.raw(b"\xff not json", "s2c")
    b.raw("{oops", "c2s")
    flows = flows_of(b)
    assert [f.status for f in flows] == ["orphan", "orphan"]
    assert flows[0].orphan is not None and flows[0].orphan.kind == "invalid"


def test_messages_recorded_after_exit_still_correlate() -> None:
    # The relay records what the server left in its pipes after the exit event.
    b = RecordBuilder()
    b.request("ping", id=1)
    b.event("exit", code=1)
    b.result(1)
    b.request("ping", id=2)
    flows = flows_of(b)
    assert [f.status for f in flows] == ["complete", "unanswered"]


def test_id_reused_while_in_flight_both_answered() -> None:
    b = RecordBuilder()
    b.request("tools/call", {"name": "a"}, id=1)
    b.request("tools/call", {"name": "b"}, id=1)
    answer_b = b.result(1)  # the newer request first: it is the one in flight
    answer_a = b.result(1)
    b.result(1)  # a third answer: a duplicate
    first, second = flows_of(b)
    assert first.status == "complete" and first.name == "a"
    assert first.attempts[0].response is not None
    assert first.attempts[0].response.seq == answer_a.seq
    assert len(first.attempts[0].duplicates) == 1
    assert second.status == "complete" and second.attempts[0].response is not None
    assert second.attempts[0].response.seq == answer_b.seq


def test_id_reused_while_in_flight_one_answer_leaves_the_second_unanswered() -> None:
    b = RecordBuilder()
    b.request("tools/call", {"name": "a"}, id=1)
    b.request("tools/call", {"name": "b"}, id=1)
    b.result(1)
    first, second = flows_of(b)
    assert (first.status, second.status) == ("unanswered", "complete")


def test_expiry_after_an_id_is_reused() -> None:
    b = RecordBuilder()
    b.request("ping", id=1)
    b.request("ping", id=2)
    b.wait(50)
    b.request("ping", id=1)
    b.wait(20)
    b.stderr("tick")
    flows = analyze(b.records, timeout=60).flows
    assert flows is not None
    two = next(f for f in flows if f.ids == [2])
    assert two.status == "unanswered" and two.timed_out


def test_progress_tokens_belong_to_the_requester() -> None:
    b = RecordBuilder()
    b.request("tools/call", {"name": "t"}, id=1, meta={"progressToken": "t"})
    b.request(
        "sampling/createMessage", {"messages": []}, id=9, dir="s2c", meta={"progressToken": "t"}
    )
    b.notify("notifications/progress", {"progressToken": "t", "progress": 1})  # server → client
    call, sampling = flows_of(b)
    assert call.progress_count == 1 and sampling.progress_count == 0


def test_mrtr_retry_after_a_timeout_gets_a_fresh_clock() -> None:
    b = RecordBuilder(modern=True)
    b.request("tools/call", {"name": "d"}, id=1)
    b.wait(61)
    b.input_required(1, state="s")
    b.request("tools/call", {"name": "d", "requestState": "s"}, id=2)
    b.notify("notifications/cancelled", {"requestId": 2}, dir="c2s")
    (flow,) = flows_of(b)
    assert flow.status == "cancelled" and flow.ids == [1, 2]


def test_listen_torn_down_after_its_result() -> None:
    b = RecordBuilder(modern=True)
    b.request("subscriptions/listen", {"notifications": {}}, id=5)
    b.result(5)
    b.notify("notifications/cancelled", {"requestId": 5})
    (flow,) = flows_of(b)
    assert flow.status == "complete" and flow.cancel is not None


def test_streaming_forgets_the_bytes_of_ended_flows() -> None:
    b = RecordBuilder(modern=True)
    for i in range(50):
        b.request("resources/read", {"uri": f"file:///{i}"}, id=i)
        b.result(i, {"contents": [{"uri": f"file:///{i}", "text": "x" * 100_000}]})
    analyzer = Analyzer()
    analyzer.feed_all(b.records)
    (conv,) = analyzer.conversations.values()
    kept = sum(
        len(a.request.wire()) + len(a.response.wire() if a.response else b"")
        for _, a in conv.recent.values()
    )
    assert kept == 0


def test_ten_thousand_flows() -> None:
    b = RecordBuilder(modern=True)
    for i in range(10_000):
        b.request("tools/call", {"name": f"t{i % 7}"}, id=i, meta={"progressToken": f"p{i}"})
        if i % 3 == 0:
            b.notify("notifications/progress", {"progressToken": f"p{i}", "progress": 1})
        b.result(i, {"content": []})
    flows = flows_of(b)
    assert len(flows) == 10_000
    assert all(f.status == "complete" for f in flows)
    assert sum(f.progress_count for f in flows) == 3334


def test_streaming_memory_is_bounded_by_what_is_in_flight() -> None:
    b = RecordBuilder(modern=True)
    for i in range(20_000):
        b.request("tools/call", {"name": "x"}, id=i, meta={"progressToken": i})
        b.result(i)
    analyzer = Analyzer()  # keeps no flows
    analyzer.feed_all(b.records)
    (conv,) = analyzer.conversations.values()
    assert not conv.in_flight and len(conv.recent) <= 4096
    assert not conv.progress and len(conv.recent_progress) <= 4096


# --- log messages: only where the spec ties them to a request (issue #15, item 13) ---


def test_legacy_log_message_is_its_own_flow_even_with_one_request_in_flight() -> None:
    """2025-11-25 logging is the session's (logging/setLevel): a log line written on
    stdio while a call runs is not that call's (fastmcp's ctx.info looks like this)."""
    b = RecordBuilder()
    b.request("tools/call", {"name": "slow"}, id=1, meta={"progressToken": 1})
    b.notify("notifications/message", {"level": "info", "data": "tick"})
    b.notify("notifications/progress", {"progressToken": 1, "progress": 1})
    b.result(1, {"content": []})
    call, log = flows_of(b)
    assert call.status == "complete" and call.progress_count == 1
    assert [e.method for e in call.notifications] == ["notifications/progress"]
    assert log.status == "notification" and log.method == "notifications/message"


def test_log_message_with_a_progress_token_goes_to_that_request() -> None:
    b = RecordBuilder()
    b.request("tools/call", {"name": "a"}, id=1, meta={"progressToken": "ta"})
    b.request("tools/call", {"name": "b"}, id=2, meta={"progressToken": "tb"})
    log = {"level": "info", "data": "b says", "_meta": {"progressToken": "tb"}}
    b.notify("notifications/message", log)
    b.result(1)
    b.result(2)
    a, two = flows_of(b)
    assert a.notifications == [] and len(two.notifications) == 1


def test_log_message_with_related_task_goes_to_the_request_that_made_the_task() -> None:
    b = RecordBuilder()
    b.request("tools/call", {"name": "research", "task": {"ttl": 60000}}, id=1)
    task = {"taskId": "t-1", "status": "working", "createdAt": "2025-11-25T00:00:00Z"}
    b.result(1, {"task": task})
    b.request("tools/call", {"name": "other"}, id=2)
    related = {"io.modelcontextprotocol/related-task": {"taskId": "t-1"}}
    b.notify("notifications/message", {"level": "info", "data": "stage 2", "_meta": related})
    b.result(2)
    research, other = flows_of(b)
    assert [e.method for e in research.notifications] == ["notifications/message"]
    assert other.notifications == []


def test_modern_log_message_with_two_log_level_requests_in_flight_is_nobodys() -> None:
    b = RecordBuilder(modern=True)
    level = {"io.modelcontextprotocol/logLevel": "info"}
    b.request("tools/call", {"name": "x"}, id=1, meta=level)
    b.request("tools/call", {"name": "y"}, id=2, meta=level)
    b.notify("notifications/message", {"level": "info", "data": "whose?"})
    b.result(1)
    b.result(2)
    x, y, log = flows_of(b)
    assert x.notifications == [] == y.notifications and log.status == "notification"


def test_modern_log_message_goes_to_the_request_that_asked_for_logs() -> None:
    b = RecordBuilder(modern=True)
    b.request("tools/call", {"name": "quiet"}, id=1)
    b.request(
        "tools/call", {"name": "loud"}, id=2, meta={"io.modelcontextprotocol/logLevel": "info"}
    )
    b.notify("notifications/message", {"level": "info", "data": "mine"})
    b.result(1)
    b.result(2)
    quiet, loud = flows_of(b)
    assert quiet.notifications == [] and len(loud.notifications) == 1
