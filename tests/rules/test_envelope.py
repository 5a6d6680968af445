"""The JSON-RPC envelope: version, batch, shape (and conformant traffic, helpers for the rest)."""

from __future__ import annotations

from typing import Any

from mcpeek.inspector.records import AnyRecord
from mcpeek.inspector.testing.records import RecordBuilder
from mcpeek.rules.engine import Reported
from mcpeek.rules.testing import lint_records

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
