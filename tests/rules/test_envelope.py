"""The JSON-RPC envelope family: version, batch, shape, ids, pairing, error objects, unanswered."""

from __future__ import annotations

from typing import Any

from inspector.records import AnyRecord
from inspector.testing.records import RecordBuilder, modern_meta
from rules.engine import Reported
from rules.envelope import UsedIds
from rules.testing import lint_records

PREFIXES = ("jsonrpc.", "id.", "response.", "notification.", "error.", "request.", "stdio.")


def found(records: list[AnyRecord], rule: str, **kw: Any) -> list[Reported]:
    return [v for v in lint_records(records, **kw) if v.rule == rule]


def family(records: list[AnyRecord], **kw: Any) -> list[Reported]:
    """What the envelope and framing families (and a crashed rule) report."""
    return [
        v
        for v in lint_records(records, **kw)
        if v.rule.startswith(PREFIXES) or v.rule == "inspector.rule-crashed"
    ]


def shown(violations: list[Reported]) -> str:
    return "\n".join(f"{v.rule} {v.msgs}: {v.message}" for v in violations)


# -- realistic conformant conversations (also used by test_framing) --------------------
SUB = "io.modelcontextprotocol/subscriptionId"


def modern_conversation() -> RecordBuilder:
    b = RecordBuilder(modern=True)
    b.request("server/discover", id=1)
    b.result(
        1,
        {
            "supportedVersions": ["2026-07-28"],
            "capabilities": {"tools": {}, "resources": {}},
            "serverInfo": {"name": "s", "version": "1"},
        },
    )
    b.request("tools/list", id=2)
    b.result(2, {"tools": [{"name": "count", "inputSchema": {"type": "object"}}]})
    b.request("tools/call", {"name": "count", "arguments": {}}, id=3, meta={"progressToken": "t"})
    b.notify("notifications/progress", {"progressToken": "t", "progress": 1})
    b.notify("notifications/progress", {"progressToken": "t", "progress": 2})
    b.result(3, {"content": []})
    # a multi round-trip request: input_required, then the retry with a new id
    elicit = {"who": {"method": "elicitation/create", "params": {"message": "who?"}}}
    b.request("tools/call", {"name": "deploy", "arguments": {}}, id=4)
    b.input_required(4, state="s1", requests=elicit)
    b.request(
        "tools/call",
        {
            "name": "deploy",
            "arguments": {},
            "requestState": "s1",
            "inputResponses": {"who": {"action": "accept", "content": {}}},
        },
        id=5,
    )
    b.result(5, {"content": []})
    # a subscription, torn down by the client
    b.request("subscriptions/listen", {"notifications": {"toolsListChanged": True}}, id=6)
    b.notify("notifications/subscriptions/acknowledged", {"_meta": {SUB: 6}})
    b.notify("notifications/tools/list_changed", {"_meta": {SUB: 6}})
    b.notify("notifications/cancelled", {"requestId": 6}, dir="c2s")
    # a cancelled call, and a response that crossed the cancellation
    b.request("tools/call", {"name": "count", "arguments": {}}, id=7)
    b.notify("notifications/cancelled", {"requestId": 7, "reason": "user"}, dir="c2s")
    # errors with defined and general codes
    b.request("tools/call", {"name": "nope", "arguments": {}}, id=8)
    b.error(8, -32602, "Unknown tool: nope")
    b.request("resources/read", {"uri": "file:///x"}, id=9)
    b.error(9, -32022, "Unsupported", data={"supported": ["2026-07-28"], "requested": "x"})
    b.request("resources/read", {"uri": "file:///y"}, id=10)
    b.error(10, 12345, "application-defined")
    # ids may be reused once answered in the modern era
    b.request("tools/list", id=2)
    b.result(2, {"tools": []})
    b.request("tools/list", id="a-string-id")
    b.result("a-string-id", {"tools": []})
    # a listen stream still open at the end is closed, not unanswered
    b.request("subscriptions/listen", {"notifications": {"toolsListChanged": True}}, id=11)
    b.notify("notifications/subscriptions/acknowledged", {"_meta": {SUB: 11}})
    return b


def initialize(b: RecordBuilder, version: str = "2025-11-25", id: Any = 0) -> None:
    b.request(
        "initialize",
        {
            "protocolVersion": version,
            "capabilities": {"sampling": {}},
            "clientInfo": {"name": "c", "version": "1"},
        },
        id=id,
    )
    b.result(
        id,
        {
            "protocolVersion": version,
            "capabilities": {"tools": {}, "resources": {}},
            "serverInfo": {"name": "s", "version": "1"},
        },
    )
    b.notify("notifications/initialized", dir="c2s")


def legacy_conversation() -> RecordBuilder:
    b = RecordBuilder()
    initialize(b)
    b.request("tools/list", id=1)
    b.result(1, {"tools": [{"name": "t", "inputSchema": {"type": "object"}}]})
    b.request("tools/call", {"name": "t", "arguments": {}, "_meta": {"progressToken": 7}}, id=2)
    b.notify("notifications/progress", {"progressToken": 7, "progress": 1, "total": 2})
    # the server's own requests, answered by the client; its ids are its own
    b.request("sampling/createMessage", {"messages": [], "maxTokens": 5}, id=0, dir="s2c")
    b.result(0, {"role": "assistant", "content": {"type": "text", "text": "hi"}}, dir="c2s")
    b.request("ping", id="p1", dir="s2c")
    b.result("p1", dir="c2s")
    b.result(2, {"content": []})
    b.request("resources/read", {"uri": "file:///gone"}, id=3)
    b.error(3, -32002, "Resource not found")  # the legacy code is fine in the legacy era
    b.request("tools/call", {"name": "t", "arguments": {}}, id=4)
    b.notify("notifications/cancelled", {"requestId": 4}, dir="c2s")
    b.request("ping", id=5)
    b.result(5)
    return b


def test_conformant_modern_conversation_is_clean() -> None:
    b = modern_conversation()
    assert family(b.records) == [], shown(family(b.records))


def test_conformant_legacy_conversation_is_clean() -> None:
    b = legacy_conversation()
    assert family(b.records) == [], shown(family(b.records))


# -- jsonrpc.version ---------------------------------------------------------------------
def test_version_wrong_or_missing() -> None:
    b = RecordBuilder()
    b.raw('{"jsonrpc":"1.0","id":1,"method":"ping"}')
    missing = b.raw('{"id":1,"result":{}}', "s2c")
    number = b.raw('{"jsonrpc":2.0,"method":"notifications/initialized"}')
    found_ = found(b.records, "jsonrpc.version")
    assert [v.msgs for v in found_] == [[1], [missing.seq], [number.seq]]
    assert 'jsonrpc is "1.0"' in found_[0].message
    assert "missing" in found_[1].message and "2.0" in found_[2].message


def test_version_right_is_quiet() -> None:
    b = RecordBuilder()
    b.request("ping", id=1)
    b.result(1)
    assert found(b.records, "jsonrpc.version") == []


# -- jsonrpc.batch -----------------------------------------------------------------------
def test_batch_is_an_error_once_per_batch() -> None:
    b = RecordBuilder()
    initialize(b)
    batch = b.raw(
        '[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]'
    )
    b.raw('[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":2,"result":{}}]', "s2c")
    (first, second) = found(b.records, "jsonrpc.batch")
    assert first.msgs == [batch.seq] and first.severity == "error"
    assert "batch of 2 messages" in first.message and "2025-11-25" in first.message
    assert second.msgs == [batch.seq + 1]


def test_batch_is_info_in_2025_03_26() -> None:
    b = RecordBuilder()
    initialize(b, "2025-03-26")
    batch = b.raw('[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"x/y"}]')
    b.raw('[{"jsonrpc":"2.0","id":1,"result":{}}]', "s2c")
    violations = found(b.records, "jsonrpc.batch")
    assert [(v.msgs, v.severity) for v in violations] == [
        ([batch.seq], "info"),
        ([batch.seq + 1], "info"),
    ]
    assert "2025-03-26" in violations[0].message
    assert [v for v in family(b.records) if v.severity != "info"] == []


def test_empty_batch() -> None:
    b = RecordBuilder()
    initialize(b, "2025-03-26")
    empty = b.raw(" [ ]")
    (v,) = found(b.records, "jsonrpc.batch")
    assert v.msgs == [empty.seq] and "empty" in v.message and v.severity == "error"


def test_single_messages_are_not_batches() -> None:
    b = legacy_conversation()
    b.raw('  {"jsonrpc":"2.0","id":9,"method":"ping","params":{"a":[1]}}')
    assert found(b.records, "jsonrpc.batch") == []


# -- jsonrpc.not-object / jsonrpc.shape ------------------------------------------------
def test_not_object() -> None:
    b = RecordBuilder()
    scalar = b.raw("42", "s2c")
    text = b.raw('"hello"', "s2c")
    batch = b.raw('[{"jsonrpc":"2.0","method":"notifications/initialized"}, 7]')
    violations = found(b.records, "jsonrpc.not-object")
    assert [v.msgs for v in violations] == [[scalar.seq], [text.seq], [batch.seq]]
    assert "int" in violations[0].message and "str" in violations[1].message
    assert "batch member" in violations[2].message
    # not JSON at all is stdio.not-json's, not this rule's
    b.raw("{nope", "s2c")
    assert len(found(b.records, "jsonrpc.not-object")) == 3


def test_shape() -> None:
    b = RecordBuilder()
    both = b.raw('{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}}', "s2c")
    neither = b.raw('{"jsonrpc":"2.0","id":2}')
    bad_method = b.raw('{"jsonrpc":"2.0","id":3,"method":7}')
    in_batch = b.raw('[{"jsonrpc":"2.0"},{"jsonrpc":"2.0","method":"m","result":1}]')
    violations = found(b.records, "jsonrpc.shape")
    assert [v.msgs for v in violations] == [
        [both.seq],
        [neither.seq],
        [bad_method.seq],
        [in_batch.seq],
        [in_batch.seq],
    ]
    assert "both result and error" in violations[0].message and "(id 1)" in violations[0].message
    assert "neither method nor result/error" in violations[1].message
    assert "method is not a string" in violations[2].message
    # the two members of the batch each say what is wrong with them
    assert "neither" in violations[3].message and "both method" in violations[4].message


def test_shape_quiet_on_every_valid_kind() -> None:
    b = legacy_conversation()
    assert found(b.records, "jsonrpc.shape") == []


# -- id.null ----------------------------------------------------------------------------
def test_null_id_on_request_and_result() -> None:
    b = RecordBuilder()
    request = b.raw('{"jsonrpc":"2.0","id":null,"method":"ping"}')
    result = b.raw('{"jsonrpc":"2.0","id":null,"result":{}}', "s2c")
    violations = found(b.records, "id.null")
    assert [v.msgs for v in violations] == [[request.seq], [result.seq]]
    assert "request has a null id" in violations[0].message


def test_null_id_error_without_an_unreadable_request() -> None:
    b = RecordBuilder()
    initialize(b)
    b.request("tools/call", {"name": "t"}, id=1)
    error = b.raw('{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"x"}}', "s2c")
    (v,) = found(b.records, "id.null")
    assert v.msgs == [error.seq] and "unreadable" in v.message


def test_null_id_error_for_unreadable_requests_is_allowed() -> None:
    b = RecordBuilder()
    initialize(b)
    b.raw("{not json")
    b.raw('{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}', "s2c")
    b.raw('{"jsonrpc":"2.0","id":1.5,"method":"ping"}')
    b.raw('{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid"}}', "s2c")
    # an error without an id (rejecting a notification) is not a null id either
    b.raw('{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid"}}', "s2c")
    assert found(b.records, "id.null") == []
    assert found(b.records, "response.unknown-id") == []


# -- id.type ----------------------------------------------------------------------------
def test_id_type() -> None:
    b = RecordBuilder()
    initialize(b)
    floating = b.raw('{"jsonrpc":"2.0","id":1.5,"method":"ping"}')
    boolean = b.raw('{"jsonrpc":"2.0","id":true,"method":"ping"}')
    obj = b.raw('{"jsonrpc":"2.0","id":{"n":1},"method":"ping"}')
    violations = found(b.records, "id.type")
    assert [v.msgs for v in violations] == [[floating.seq], [boolean.seq], [obj.seq]]
    assert "1.5" in violations[0].message and "boolean" in violations[1].message
    assert "object" in violations[2].message


def test_id_type_quiet_on_strings_integers_and_null() -> None:
    b = RecordBuilder()
    initialize(b)
    b.request("ping", id="abc")
    b.request("ping", id=-7)
    b.request("ping", id=2**40)
    b.raw('{"jsonrpc":"2.0","id":null,"method":"ping"}')  # id.null's
    assert found(b.records, "id.type") == []


# -- id.reused --------------------------------------------------------------------------
def test_reused_while_in_flight_modern() -> None:
    b = RecordBuilder(modern=True)
    first = b.request("tools/call", {"name": "slow"}, id=5)
    second = b.request("tools/call", {"name": "other"}, id=5)
    (v,) = found(b.records, "id.reused")
    assert v.msgs == [first.seq, second.seq]
    assert "id 5 is still in flight from the client" in v.message


def test_reuse_after_answer_or_cancel_is_fine_modern() -> None:
    b = RecordBuilder(modern=True)
    b.request("tools/call", {"name": "a"}, id=1)
    b.result(1, {"content": []})
    b.request("tools/call", {"name": "b"}, id=1)  # answered: free again
    b.notify("notifications/cancelled", {"requestId": 1}, dir="c2s")
    b.request("tools/call", {"name": "c"}, id=1)  # cancelled: free again
    b.result(1, {"content": []})
    b.request("tools/call", {"name": "d"}, id="1")  # "1" is not 1
    b.request("tools/call", {"name": "e"}, id=2)
    b.input_required(2, state="s")
    b.request(
        "tools/call", {"name": "e", "requestState": "s", "inputResponses": {}}, id=3
    )  # a retry with a new id
    assert found(b.records, "id.reused") == []


def test_reused_in_legacy_session_after_answer() -> None:
    b = RecordBuilder()
    initialize(b)
    b.request("ping", id=1)
    b.result(1)
    b.request("ping", id=2)
    b.result(2)
    again = b.request("ping", id=1)
    b.result(1)
    (v,) = found(b.records, "id.reused")
    assert v.msgs == [again.seq] and "already used by the client in this session" in v.message


def test_legacy_sides_have_their_own_ids() -> None:
    b = RecordBuilder()
    initialize(b, id=1)
    b.request("ping", id=1, dir="s2c")  # the server's own id 1
    b.result(1, dir="c2s")
    b.request("ping", id=2, dir="s2c")
    b.result(2, dir="c2s")
    b.request("ping", id=2)
    b.result(2)
    assert found(b.records, "id.reused") == []


def test_dual_era_probe_then_initialize_with_the_same_id() -> None:
    meta = modern_meta()
    # a legacy server rejects the probe
    b = RecordBuilder()
    b.request("server/discover", id=0, meta=meta)
    b.error(0, -32601, "Method not found")
    initialize(b, id=0)
    b.request("ping", id=1)
    b.result(1)
    assert family(b.records) == [], shown(family(b.records))
    # a legacy server ignores the probe: the client gives up and initializes
    b = RecordBuilder()
    b.request("server/discover", id=0, meta=meta)
    b.wait(5)
    initialize(b, id=0)
    assert family(b.records) == [], shown(family(b.records))


def test_used_ids_stay_compact() -> None:
    used = UsedIds()
    for n in range(100_000):
        used.add(n)
    used.add("x")
    for n in (200_005, 200_003, 200_004):
        used.add(n)
    assert len(used) == 3  # two ranges and one string
    assert 99_999 in used and 100_000 not in used and 200_004 in used and "x" in used
    used.add(-1)
    used.add(100_000)
    assert len(used) == 3 and -1 in used and 100_000 in used


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


# -- error objects ----------------------------------------------------------------------
def error_line(b: RecordBuilder, id: int, error: str) -> int:
    b.request("tools/call", {"name": "t"}, id=id)
    return b.raw(f'{{"jsonrpc":"2.0","id":{id},"error":{error}}}', "s2c").seq


def test_error_code_type() -> None:
    b = RecordBuilder()
    initialize(b)
    text = error_line(b, 1, '{"code":"-32603","message":"x"}')
    floating = error_line(b, 2, '{"code":-32603.5,"message":"x"}')
    missing = error_line(b, 3, '{"message":"x"}')
    not_object = error_line(b, 4, '"boom"')
    error_line(b, 5, '{"code":-32603,"message":"fine"}')
    violations = found(b.records, "error.code-type")
    assert [v.msgs for v in violations] == [[text], [floating], [missing], [not_object]]
    assert 'error code "-32603" for tools/call (id 1) is not an integer' in violations[0].message
    assert "has no code" in violations[2].message and '"boom"' in violations[3].message


def test_error_message() -> None:
    b = RecordBuilder()
    initialize(b)
    missing = error_line(b, 1, '{"code":-32603}')
    number = error_line(b, 2, '{"code":-32603,"message":5}')
    error_line(b, 3, '{"code":-32603,"message":""}')  # empty, but a string
    error_line(b, 4, '"boom"')  # error.code-type's
    violations = found(b.records, "error.message")
    assert [v.msgs for v in violations] == [[missing], [number]]
    assert "has no message" in violations[0].message and "5" in violations[1].message


def modern_error(code: int, method: str = "tools/call") -> RecordBuilder:
    b = RecordBuilder(modern=True)
    b.request(method, {"name": "t"}, id=1)
    b.error(1, code, "x")
    return b


def legacy_error(code: int) -> RecordBuilder:
    b = RecordBuilder()
    initialize(b)
    b.request("tools/call", {"name": "t"}, id=1)
    b.error(1, code, "x")
    return b


def test_reserved_code() -> None:
    b = modern_error(-32050)
    (v,) = found(b.records, "error.reserved-code")
    assert v.msgs == [b.last.seq] and "-32050" in v.message and "reserved" in v.message
    for code in (-32020, -32021, -32022, -32042, -32100, -32019, -32602):
        assert found(modern_error(code).records, "error.reserved-code") == [], code
    assert found(legacy_error(-32050).records, "error.reserved-code") == []


def test_legacy_code() -> None:
    b = modern_error(-32002, "resources/read")
    (v,) = found(b.records, "error.legacy-code")
    assert v.msgs == [b.last.seq] and "-32002 (resource not found)" in v.message
    assert "-32602" in v.message
    (v,) = found(modern_error(-32042).records, "error.legacy-code")
    assert "URL elicitation" in v.message
    assert found(modern_error(-32002).records, "error.legacy-range") == []
    assert found(modern_error(-32042).records, "error.reserved-code") == []
    assert found(legacy_error(-32002).records, "error.legacy-code") == []
    assert found(legacy_error(-32042).records, "error.legacy-code") == []


def test_legacy_range() -> None:
    b = modern_error(-32000)
    (v,) = found(b.records, "error.legacy-range")
    assert v.severity == "warning" and v.msgs == [b.last.seq] and "-32000" in v.message
    assert len(found(modern_error(-32019).records, "error.legacy-range")) == 1
    for code in (-32020, -31001, -32600, -32603, 1):
        assert found(modern_error(code).records, "error.legacy-range") == [], code
    assert found(legacy_error(-32001).records, "error.legacy-range") == []


def test_a_legacy_server_rejecting_the_probe_is_not_judged_modern() -> None:
    for code in (-32002, -32000, -32050):
        b = RecordBuilder()
        b.request("server/discover", id=1, meta=modern_meta())
        b.error(1, code, "Server not initialized")
        initialize(b, id=2)
        assert family(b.records) == [], (code, shown(family(b.records)))


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
