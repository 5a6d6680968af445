"""Request and result ``_meta``: per-request fields, serverInfo, key names, trace context, logs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from inspector.records import AnyRecord
from inspector.testing.records import RecordBuilder, modern_meta
from rules.engine import Reported
from rules.meta import (
    baggage_problem,
    key_problem,
    traceparent_problem,
    tracestate_problem,
)
from rules.testing import lint_records
from tests.rules.test_results import (
    SERVER_META,
    answer,
    bare,
    discovered,
    family,
    sdk_like_conversation,
    shown,
)

PV = "io.modelcontextprotocol/protocolVersion"
CAPS = "io.modelcontextprotocol/clientCapabilities"
INFO = "io.modelcontextprotocol/clientInfo"
LEVEL = "io.modelcontextprotocol/logLevel"
EXAMPLES = Path("/work/shared/spec/2026-07-28/examples")


def found(records: list[AnyRecord], rule: str) -> list[Reported]:
    return [v for v in lint_records(records) if v.rule == rule]


def without(*keys: str, **extra: Any) -> dict[str, Any]:
    """A modern per-request ``_meta`` with ``keys`` left out."""
    meta = {k: v for k, v in modern_meta(**extra).items() if k not in keys}
    return meta


def send_request(b: RecordBuilder, id: Any, method: str, params: dict[str, Any]) -> int:
    """A client request exactly as given (no ``_meta`` added)."""
    b.send({"jsonrpc": "2.0", "id": id, "method": method, "params": params}, "c2s")
    return b.last.seq


def legacy() -> RecordBuilder:
    b = RecordBuilder()
    b.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}}, id=0)
    b.result(0, {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}})
    b.notify("notifications/initialized", dir="c2s")
    return b


# -- conformant traffic --------------------------------------------------------------------
def test_sdk_like_modern_conversation_is_clean() -> None:
    b = sdk_like_conversation()
    assert family(b.records) == [], shown(family(b.records))


def test_legacy_requests_need_no_meta() -> None:
    b = legacy()
    b.request("tools/list", id=1)
    b.result(1, {"tools": []})
    b.notify("notifications/message", {"level": "info", "data": "x"})
    assert family(b.records) == [], shown(family(b.records))


# -- per-request fields --------------------------------------------------------------------
@pytest.mark.parametrize(
    ("rule", "key", "severity"),
    [
        ("meta.protocol-version-missing", PV, "error"),
        ("meta.client-capabilities-missing", CAPS, "error"),
        ("meta.client-info-missing", INFO, "warning"),
    ],
)
def test_a_request_without_a_per_request_field(rule: str, key: str, severity: str) -> None:
    b = discovered()
    seq = send_request(b, 1, "tools/list", {"_meta": without(key)})
    b.error(1, -32602, "missing _meta field")
    b.request("tools/list", id=2)  # complete: near miss
    answer(b, 2, {"tools": []})
    [v] = found(b.records, rule)
    assert v.msgs == [seq]
    assert v.severity == severity
    assert f'tools/list request (id 1) has no _meta["{key}"]' in v.message


def test_a_request_without_any_meta() -> None:
    b = discovered()
    seq = send_request(b, 1, "tools/list", {})
    b.error(1, -32602, "missing _meta")
    for rule in (
        "meta.protocol-version-missing",
        "meta.client-capabilities-missing",
        "meta.client-info-missing",
    ):
        [v] = found(b.records, rule)
        assert v.msgs == [seq]
        assert "has no _meta (" in v.message


def test_a_first_discover_without_meta_is_checked_once_its_answer_shows_a_modern_server() -> None:
    b = RecordBuilder()
    seq = send_request(b, "d", "server/discover", {})
    answer(b, "d", {"supportedVersions": ["2026-07-28"], "capabilities": {}})
    [v] = found(b.records, "meta.protocol-version-missing")
    assert v.msgs == [seq]
    [w] = found(b.records, "meta.malformed-accepted")
    assert w.msgs == [seq, seq + 1]


def test_a_rejected_discover_probe_then_initialize_is_legacy() -> None:
    b = RecordBuilder()
    b.request("server/discover", id="d", meta=modern_meta())
    b.error("d", -32601, "Method not found")
    b.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}}, id=0)
    b.result(0, {"protocolVersion": "2025-11-25", "capabilities": {}})
    b.request("tools/list", id=1)
    b.result(1, {"tools": []})
    assert family(b.records) == [], shown(family(b.records))


# -- meta.server-info-missing --------------------------------------------------------------
def test_result_without_server_info() -> None:
    b = discovered()
    b.request("tools/call", {"name": "x"}, id=1)
    seq = bare(b, 1, {"resultType": "complete", "content": []})
    [v] = found(b.records, "meta.server-info-missing")
    assert v.msgs == [seq]
    assert v.severity == "warning"
    assert "tools/call (id 1)" in v.message


def test_server_info_present_and_errors_are_fine() -> None:
    b = discovered()
    b.request("tools/call", {"name": "x"}, id=1)
    answer(b, 1, {"content": []})
    b.request("tools/call", {"name": "x"}, id=2)
    b.error(2, -32602, "no")
    assert found(b.records, "meta.server-info-missing") == []


# -- meta.malformed-accepted ---------------------------------------------------------------
def test_server_accepts_a_request_missing_required_meta() -> None:
    b = discovered()
    request = send_request(b, 1, "tools/call", {"name": "x", "_meta": without(CAPS)})
    seq = answer(b, 1, {"content": []})
    [v] = found(b.records, "meta.malformed-accepted")
    assert v.msgs == [request, seq]
    assert "lacks clientCapabilities" in v.message
    assert "-32602" in v.message


def test_server_rejecting_or_client_info_only_missing_is_fine() -> None:
    b = discovered()
    send_request(b, 1, "tools/call", {"name": "x", "_meta": without(PV, CAPS)})
    b.error(1, -32602, "Invalid params")
    send_request(b, 2, "tools/call", {"name": "x", "_meta": without(INFO)})
    answer(b, 2, {"content": []})  # clientInfo is not required
    assert found(b.records, "meta.malformed-accepted") == []


def test_a_legacy_server_answering_a_meta_less_request_is_not_judged() -> None:
    b = RecordBuilder(modern=True)
    b.request("tools/list", id=1)
    send_request(b, 2, "tools/call", {"name": "x"})
    b.send({"jsonrpc": "2.0", "id": 1, "result": {"tools": []}}, "s2c")
    b.send({"jsonrpc": "2.0", "id": 2, "result": {"content": []}}, "s2c")
    assert found(b.records, "meta.malformed-accepted") == []


# -- meta.key-format -----------------------------------------------------------------------
@pytest.mark.parametrize(
    "key",
    [
        "progressToken",
        "io.modelcontextprotocol/protocolVersion",
        "com.example/",
        "com.example.mcp/x-y_z.1",
        "a/b",
        "x",
        "",
        "traceparent",
        "dev.mcp/tool",
    ],
)
def test_valid_keys(key: str) -> None:
    assert key_problem(key) is None


@pytest.mark.parametrize(
    ("key", "why"),
    [
        ("my key", "name must start and end"),
        ("_private", "name must start and end"),
        ("name-", "name must start and end"),
        ("openai/toolInvocation/invoking", "more than one '/'"),
        ("1com.example/x", "prefix label '1com'"),
        ("com..example/x", "prefix label ''"),
        ("com.example-/x", "prefix label 'example-'"),
        ("/x", "prefix label ''"),
        ("com.ex_ample/x", "prefix label 'ex_ample'"),
    ],
)
def test_invalid_keys(key: str, why: str) -> None:
    problem = key_problem(key)
    assert problem is not None
    assert why in problem


def test_key_format_checks_nested_meta_in_both_eras() -> None:
    b = discovered()
    b.request("tools/list", id=1)
    seq = answer(b, 1, {"tools": [{"name": "t", "inputSchema": {}, "_meta": {"bad key": 1}}]})
    [v] = found(b.records, "meta.key-format")
    assert v.msgs == [seq]
    assert "'bad key' at result.tools[0]._meta" in v.message
    lb = legacy()
    lb.request("tools/call", {"name": "t"}, id=1, meta={"x/y/z": 1})
    seq = lb.last.seq
    lb.result(1, {"content": []})
    [w] = found(lb.records, "meta.key-format")
    assert w.msgs == [seq]
    assert "'x/y/z' at params._meta: more than one '/'" in w.message


def test_key_format_skips_free_form_json_and_old_revisions() -> None:
    b = discovered()
    args = {"_meta": {"not MCP's": 1}}
    b.request("tools/call", {"name": "t", "arguments": args}, id=1)
    answer(b, 1, {"content": [], "structuredContent": {"_meta": {"any thing": 2}}})
    assert found(b.records, "meta.key-format") == []
    old = RecordBuilder()
    old.request("initialize", {"protocolVersion": "2025-03-26", "capabilities": {}}, id=0)
    old.result(0, {"protocolVersion": "2025-03-26", "capabilities": {}})
    old.request("tools/call", {"name": "t"}, id=1, meta={"any key at all": 1})
    old.result(1, {"content": []})
    assert found(old.records, "meta.key-format") == []


def test_official_examples_have_valid_meta_keys() -> None:
    if not EXAMPLES.is_dir():
        pytest.skip("spec examples not available")
    b = discovered()
    count = 0
    for path in sorted(EXAMPLES.glob("*/*.json")):
        value = json.loads(path.read_text())
        count += 1
        b.notify("notifications/vendor/example", {"example": value})
    assert count > 50
    assert found(b.records, "meta.key-format") == []


# -- meta.trace-context --------------------------------------------------------------------
GOOD_PARENT = "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01"


@pytest.mark.parametrize(
    ("value", "why"),
    [
        (GOOD_PARENT, None),
        ("01-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01-future", None),
        ("00-0AF7651916CD43DD8448EB211C80319C-00f067aa0ba902b7-01", "lower-case hex"),
        ("00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7", "lower-case hex"),
        ("ff-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01", "version ff"),
        ("00-00000000000000000000000000000000-00f067aa0ba902b7-01", "trace-id is all zeros"),
        ("00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01", "parent-id is all zeros"),
        ("00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01-x", "exactly four fields"),
    ],
)
def test_traceparent(value: str, why: str | None) -> None:
    problem = traceparent_problem(value)
    assert problem is None if why is None else (problem is not None and why in problem)


def test_tracestate_and_baggage() -> None:
    assert tracestate_problem("congo=t61rcWkgMzE,rojo=00f067aa0ba902b7") is None
    assert tracestate_problem("fw529a3039@dt=ZmYtMjk1LjM, ,congo=x") is None
    assert tracestate_problem("") is None
    assert tracestate_problem("Congo=x") is not None
    assert tracestate_problem("congo=bad,value") is not None
    assert tracestate_problem(",".join(f"k{i}=v" for i in range(33))) is not None
    assert baggage_problem("userId=alice,serverNode=DF%2028,isProduction=false") is None
    assert baggage_problem("key1=value1;property1;property2, key2 = value2") is None
    assert baggage_problem("key with space=1") is not None
    assert baggage_problem('k="quoted"') is not None
    assert baggage_problem("") is not None


def test_trace_context_in_meta() -> None:
    b = discovered()
    b.request("tools/call", {"name": "t"}, id=1, meta={"traceparent": GOOD_PARENT})
    answer(b, 1, {"content": []})
    b.request("tools/call", {"name": "t"}, id=2, meta={"traceparent": "abc", "baggage": 5})
    seq = b.last.seq
    answer(b, 2, {"content": []})
    v, w = found(b.records, "meta.trace-context")
    assert v.msgs == w.msgs == [seq]
    assert "traceparent 'abc'" in v.message
    assert "baggage 5: not a string" in w.message


def test_trace_context_is_a_modern_rule() -> None:
    b = legacy()
    b.request("tools/call", {"name": "t"}, id=1, meta={"traceparent": "abc"})
    b.result(1, {"content": []})
    assert found(b.records, "meta.trace-context") == []


# -- meta.log-without-level ----------------------------------------------------------------
def test_log_for_a_request_that_did_not_ask() -> None:
    b = discovered()
    b.request("tools/call", {"name": "t"}, id=1)
    request = b.last.seq
    b.notify("notifications/message", {"level": "info", "data": "x"})
    log = b.last.seq
    answer(b, 1, {"content": []})
    [v] = found(b.records, "meta.log-without-level")
    assert v.msgs == [request, log]
    assert "tools/call (id 1), whose request set no" in v.message


def test_log_for_a_request_that_asked() -> None:
    b = discovered()
    b.request("tools/call", {"name": "t"}, id=1, meta={LEVEL: "debug"})
    b.notify("notifications/message", {"level": "info", "data": "x"})
    answer(b, 1, {"content": []})
    b.notify("notifications/message", {"level": "info", "data": "late"})  # after the answer
    assert found(b.records, "meta.log-without-level") == []


def test_log_with_no_request_in_flight() -> None:
    b = discovered()
    b.notify("notifications/message", {"level": "info", "data": "server started"})
    log = b.last.seq
    [v] = found(b.records, "meta.log-without-level")
    assert v.msgs == [log]
    assert "no request in flight" in v.message


def test_log_among_several_requests_in_flight() -> None:
    b = discovered()
    b.request("tools/call", {"name": "a"}, id=1)
    b.request("tools/call", {"name": "b"}, id=2)
    b.notify("notifications/message", {"level": "info", "data": "x"})  # whose? neither asked
    b.request("tools/call", {"name": "c"}, id=3, meta={LEVEL: "info"})
    b.notify("notifications/message", {"level": "info", "data": "y"})  # may be for id 3
    for id in (1, 2, 3):
        answer(b, id, {"content": []})
    [v] = found(b.records, "meta.log-without-level")
    assert "none of the 2 requests in flight" in v.message


def test_log_on_a_listen_stream_is_another_rules_business() -> None:
    b = discovered()
    b.request("subscriptions/listen", {"notifications": {}}, id="L")
    sub = {"_meta": {"io.modelcontextprotocol/subscriptionId": "L"}}
    b.notify("notifications/subscriptions/acknowledged", sub)
    b.notify("notifications/message", {"level": "info", "data": "x", **sub})
    assert found(b.records, "meta.log-without-level") == []


def test_server_meta_constant_is_conformant() -> None:
    assert key_problem(next(iter(SERVER_META))) is None


def test_logs_on_http_streams_belong_to_their_own_request() -> None:
    b = RecordBuilder("http", modern=True)
    b.http("x1", "request", method="POST", path="/mcp", headers=[])
    b.request("tools/call", {"name": "quiet"}, id=1, ch="x1")
    quiet = b.last.seq
    b.http("x1", "response", status=200, headers=[("content-type", "text/event-stream")])
    b.http("x2", "request", method="POST", path="/mcp", headers=[])
    b.request("tools/call", {"name": "chatty"}, id=2, ch="x2", meta={LEVEL: "info"})
    b.http("x2", "response", status=200, headers=[("content-type", "text/event-stream")])
    b.notify("notifications/message", {"level": "info", "data": "ok"}, ch="x2")
    b.notify("notifications/message", {"level": "info", "data": "not asked"}, ch="x1")
    log = b.last.seq
    for id, ch in ((2, "x2"), (1, "x1")):
        b.send({"jsonrpc": "2.0", "id": id, "result": {"resultType": "complete"}}, "s2c", ch)
        b.http(ch, "end", reason="complete")
    [v] = found(b.records, "meta.log-without-level")
    assert v.msgs == [quiet, log]
