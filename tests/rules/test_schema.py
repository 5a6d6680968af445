"""Schema rules: params, results, notifications and error data against the version's models;
unknown methods. (The models' agreement with schema.json: test_schema_differential.)"""

from __future__ import annotations

from typing import Any

import pytest

from mcpeek.inspector.records import AnyRecord
from mcpeek.inspector.testing.records import RecordBuilder, modern_meta
from mcpeek.rules.base import catalog
from mcpeek.rules.engine import Reported
from mcpeek.rules.models import spec_for
from mcpeek.rules.testing import lint_records

FAMILY = ("schema.", "method.unknown", "inspector.rule-crashed")
SERVER_META = {"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}}
CACHE = {"ttlMs": 0, "cacheScope": "private"}
TEXT = [{"type": "text", "text": "sunny"}]
TASK = {
    "taskId": "t1",
    "status": "working",
    "createdAt": "now",
    "lastUpdatedAt": "now",
    "ttl": None,
}


def family(records: list[AnyRecord], *, spec: str | None = None) -> list[Reported]:
    return [v for v in lint_records(records, spec=spec) if v.rule.startswith(FAMILY)]


def found(records: list[AnyRecord], rule: str, *, spec: str | None = None) -> list[Reported]:
    return [v for v in lint_records(records, spec=spec) if v.rule == rule]


def shown(violations: list[Reported]) -> str:
    return "\n".join(f"{v.rule} {v.msgs}: {v.message}" for v in violations)


def answer(b: RecordBuilder, id: Any, body: dict[str, Any] | None = None) -> int:
    """A modern result with resultType and serverInfo; returns its seq."""
    full = {"resultType": "complete", "_meta": SERVER_META, **(body or {})}
    b.send({"jsonrpc": "2.0", "id": id, "result": full}, "s2c")
    return b.last.seq


def initialize(b: RecordBuilder, version: str = "2025-11-25", answered: str | None = None) -> None:
    b.request(
        "initialize",
        {
            "protocolVersion": version,
            "capabilities": {"sampling": {}, "elicitation": {}, "roots": {"listChanged": True}},
            "clientInfo": {"name": "c", "version": "1"},
        },
        id=0,
    )
    b.result(
        0,
        {
            "protocolVersion": answered or version,
            "capabilities": {"tools": {}, "prompts": {}, "resources": {}, "logging": {}},
            "serverInfo": {"name": "s", "version": "1"},
        },
    )
    b.notify("notifications/initialized", dir="c2s")


def test_the_family_is_registered_as_the_catalog_says() -> None:
    rules = catalog()
    for rule_id in ("schema.request", "schema.result", "schema.notification", "schema.error"):
        assert rules[rule_id].severity == "error" and rules[rule_id].era is None
    assert rules["method.unknown"].severity == "info"


# -- schema.request -----------------------------------------------------------------------
def test_request_params_of_the_wrong_type() -> None:
    b = RecordBuilder(modern=True)
    bad = b.request("tools/call", {"name": 5, "arguments": {}}, id=4)
    (v,) = found(b.records, "schema.request")
    assert v.msgs == [bad.seq]
    assert "tools/call request (id 4): params.name: expected str, got int" in v.message
    assert "(schema 2026-07-28)" in v.message


def test_request_nested_problem_names_its_path_and_what_was_expected() -> None:
    b = RecordBuilder(modern=True)
    b.request(
        "completion/complete",
        {"ref": {"type": "ref/tool", "name": "x"}, "argument": {"name": "a", "value": "b"}},
    )
    b.request("prompts/get", {"name": "p", "arguments": {"lang": 3}})
    first, second = found(b.records, "schema.request")
    assert "params.ref.type: invalid value 'ref/tool'" in first.message
    assert "expected one of 'ref/prompt', 'ref/resource'" in first.message
    assert "params.arguments[...]: expected str, got int" in second.message


def test_request_missing_meta_is_left_to_the_meta_rules_in_the_modern_era() -> None:
    b = RecordBuilder()
    caps_only = {"io.modelcontextprotocol/clientCapabilities": {}}
    b.request("tools/list", {}, meta=caps_only)  # modern, but no protocolVersion
    b.request("tools/call", {"name": "x"}, meta=caps_only)
    violations = lint_records(b.records)
    assert not [v for v in violations if v.rule == "schema.request"], shown(violations)
    assert [v for v in violations if v.rule == "meta.protocol-version-missing"]


def test_request_missing_required_params_in_a_legacy_session() -> None:
    b = RecordBuilder()
    b.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}}, id=0)
    b.request("tools/call", id=7)  # no params at all
    first, second = found(b.records, "schema.request")
    assert "params: missing required field `clientInfo`" in first.message
    assert "tools/call request (id 7): params: missing (required for tools/call)" in second.message
    assert "(schema 2025-11-25)" in second.message


def test_request_optional_params_and_unknown_members_are_fine() -> None:
    b = RecordBuilder()
    initialize(b)
    b.request("tools/list")  # params optional in 2025-11-25
    b.request("ping")
    b.request("tools/call", {"name": "x", "arguments": {"a": [1, None]}, "x-vendor": {"k": 1}})
    assert family(b.records) == []


def test_a_dual_era_probe_is_read_as_modern_and_leniently() -> None:
    b = RecordBuilder()
    b.request("server/discover", {}, id=1)  # a probe without _meta, rejected by a legacy server
    b.error(1, -32601, "Method not found")
    initialize(b)
    assert family(b.records) == []


# -- schema.result ------------------------------------------------------------------------
def test_result_with_an_unknown_content_block() -> None:
    b = RecordBuilder(modern=True)
    request = b.request("tools/call", {"name": "weather"}, id=2)
    seq = answer(b, 2, {"content": [{"type": "txt", "text": "x"}]})
    (v,) = found(b.records, "schema.result")
    assert v.msgs == [request.seq, seq]
    assert "result for tools/call (id 2): result.content[0].type: invalid value 'txt'" in v.message
    assert "'text', 'image', 'audio', 'resource_link', 'resource'" in v.message


def test_result_is_read_by_its_result_type() -> None:
    b = RecordBuilder(modern=True)
    b.request("tools/call", {"name": "deploy"}, id=1)
    form = {"type": "object", "properties": {"ok": {"type": "boolean"}}}
    elicit = {
        "method": "elicitation/create",
        "params": {"message": "Sure?", "requestedSchema": form},
    }
    answer(b, 1, {"resultType": "input_required", "inputRequests": {"ok": elicit}})
    b.request(
        "tools/call", {"name": "deploy", "inputResponses": {"ok": {"action": "accept"}}}, id=2
    )
    answer(b, 2, {"content": TEXT})
    b.request("tools/call", {"name": "deploy"}, id=3)
    bad = {"method": "elicitation/create", "params": {"message": "Sure?"}}
    seq = answer(b, 3, {"resultType": "input_required", "inputRequests": {"ok": bad}})
    (v,) = found(b.records, "schema.result")
    assert v.msgs[-1] == seq
    assert (
        "result.inputRequests['ok'].params: missing required field `requestedSchema`" in v.message
    )


def test_result_parts_other_rules_report_are_left_to_them() -> None:
    b = RecordBuilder(modern=True)
    b.request("tools/list", id=1)
    b.send({"jsonrpc": "2.0", "id": 1, "result": {"tools": []}}, "s2c")  # no resultType, no ttl
    b.request("tools/call", {"name": "x"}, id=2)
    answer(b, 2, {"resultType": "input_required", "inputRequests": {"a": {"method": "ping"}}})
    b.request("tools/call", {"name": "x"}, id=3)
    answer(b, 3, {"resultType": "com.example/partial", "partial": 1})
    assert found(b.records, "schema.result") == []


def test_a_task_augmented_request_may_be_answered_with_a_task() -> None:
    b = RecordBuilder()
    initialize(b)
    b.request("tools/call", {"name": "slow", "task": {"ttl": 60000}}, id=1)
    b.result(1, {"task": TASK})
    b.request("tools/call", {"name": "quick"}, id=2)
    seq = b.result(2, {"task": TASK}).seq  # no task was asked for: a CallToolResult is due
    (v,) = found(b.records, "schema.result")
    assert v.msgs[-1] == seq and "result: missing required field `content`" in v.message


def test_result_version_follows_the_negotiation_and_falls_back() -> None:
    b = RecordBuilder()
    initialize(b, "2025-11-25", answered="2025-03-26")
    link = {"type": "resource_link", "uri": "file:///a", "name": "a"}
    b.request("tools/call", {"name": "x"}, id=1)
    b.result(1, {"content": [link]})
    (v,) = found(b.records, "schema.result")
    assert "invalid value 'resource_link' in 2025-03-26" in v.message
    assert "(schema 2025-03-26)" in v.message
    later = RecordBuilder()
    initialize(later, "2025-09-30")  # unknown: the nearest earlier one, 2025-06-18
    later.request("tools/call", {"name": "x"}, id=1)
    later.result(1, {"content": [link]})
    assert found(later.records, "schema.result") == []
    assert spec_for("2025-09-30").name == "2025-06-18"


def test_spec_option_forces_the_version() -> None:
    b = RecordBuilder()
    initialize(b)
    b.request("tools/call", {"name": "x"}, id=1)
    b.result(1, {"content": TEXT, "structuredContent": [1, 2]})  # an object in 2025-11-25
    (v,) = found(b.records, "schema.result")
    assert "result.structuredContent: expected object, got array" in v.message
    assert found(b.records, "schema.result", spec="2026-07-28") == []


def test_a_result_nobody_asked_for_is_not_read() -> None:
    b = RecordBuilder(modern=True)
    answer(b, 99, {"content": "nope"})
    assert found(b.records, "schema.result") == []


# -- schema.notification -----------------------------------------------------------------
def test_notification_params_of_the_wrong_type() -> None:
    b = RecordBuilder(modern=True)
    b.request("tools/call", {"name": "x"}, id=1, meta={"progressToken": "p"})
    bad = b.notify("notifications/progress", {"progressToken": "p", "progress": "half"})
    answer(b, 1, {"content": TEXT})
    (v,) = found(b.records, "schema.notification")
    assert v.msgs == [bad.seq]
    assert (
        "notifications/progress notification: params.progress: expected float, got str" in v.message
    )


def test_notification_requirements_differ_by_version() -> None:
    b = RecordBuilder()
    initialize(b)
    b.notify("notifications/cancelled", {"reason": "task gone"}, dir="c2s")  # fine in 2025-11-25
    b.notify("notifications/tools/list_changed")  # params optional
    assert family(b.records) == []
    old = RecordBuilder()
    initialize(old, "2025-06-18")
    bad = old.notify("notifications/cancelled", {"reason": "user"}, dir="c2s")
    (v,) = found(old.records, "schema.notification")
    assert v.msgs == [bad.seq] and "params: missing required field `requestId`" in v.message


# -- schema.error -----------------------------------------------------------------------
def test_error_data_of_a_defined_code() -> None:
    b = RecordBuilder(modern=True)
    request = b.request("tools/call", {"name": "x"}, id=1)
    data = {"supported": ["2026-07-28"], "requested": 2025}
    error = b.error(1, -32022, "Unsupported protocol version", data=data)
    b.request("tools/call", {"name": "x"}, id=2)
    b.error(2, -32021, "Missing capability", data={"requiredCapabilities": {"elicitation": True}})
    first, second = found(b.records, "schema.error")
    assert first.msgs == [request.seq, error.seq]
    assert "error -32022 for tools/call (id 1): error.data.requested: expected str, got int" in (
        first.message
    )
    assert (
        "error.data.requiredCapabilities.elicitation: expected object, got bool" in second.message
    )


def test_error_shape_left_to_its_rule_and_other_codes_free() -> None:
    b = RecordBuilder(modern=True)
    b.request("tools/call", {"name": "x"}, id=1)
    b.error(1, -32022, "Unsupported protocol version")  # version.unsupported-error-shape's
    b.request("tools/call", {"name": "x"}, id=2)
    b.error(2, -32602, "Invalid params", data=[1, 2])
    b.request("tools/call", {"name": "x"}, id=3)
    b.error(3, -32020, "Header mismatch", data="anything")
    violations = lint_records(b.records)
    assert not [v for v in violations if v.rule == "schema.error"], shown(violations)
    assert [v for v in violations if v.rule == "version.unsupported-error-shape"]


def test_error_without_an_id_is_still_read() -> None:
    b = RecordBuilder(modern=True)
    b.request("tools/call", {"name": "x"}, id=1)
    error = {"code": -32021, "message": "Missing capability", "data": {}}
    b.send({"jsonrpc": "2.0", "error": error}, "s2c")
    (v,) = found(b.records, "schema.error")
    assert "error -32021 for ? (id absent): error.data: missing required field" in v.message


def test_legacy_url_elicitation_required_error() -> None:
    b = RecordBuilder()
    initialize(b)
    b.request("tools/call", {"name": "x"}, id=1)
    b.error(1, -32042, "URL elicitation required", data={"elicitations": [{"mode": "url"}]})
    (v,) = found(b.records, "schema.error")
    assert "error.data.elicitations[0]: missing required field" in v.message


# -- method.unknown ---------------------------------------------------------------------
def test_unknown_method_reported_once_per_conversation() -> None:
    b = RecordBuilder(modern=True)
    first = b.request("getWeather", {"city": "Paris"})
    b.request("getWeather", {"city": "Rome"})
    b.notify("notifications/weather", {})
    v1, v2 = found(b.records, "method.unknown")
    assert v1.msgs == [first.seq] and v1.severity == "info"
    assert "request method 'getWeather' is not defined by any MCP revision" in v1.message
    assert "notification method 'notifications/weather'" in v2.message


@pytest.mark.parametrize(
    "method",
    ["com.example/weather", "io.modelcontextprotocol/tasks/get", "notifications/dev.acme/event"],
)
def test_vendor_and_extension_methods_are_not_unknown(method: str) -> None:
    b = RecordBuilder(modern=True)
    b.request(method, {})
    assert found(b.records, "method.unknown") == []


def test_methods_of_any_revision_are_known() -> None:
    b = RecordBuilder(modern=True)
    b.request("ping")  # removed in 2026-07-28: version.removed-method's business
    b.request("tasks/get", {"taskId": "t"})
    assert found(b.records, "method.unknown") == []


# -- conformant conversations ------------------------------------------------------------
def test_a_conformant_modern_conversation_is_clean() -> None:
    b = RecordBuilder(modern=True)
    b.request("server/discover", {}, id=1)
    answer(b, 1, {"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}}, **CACHE})
    b.request("tools/list", {}, id=2)
    tool = {
        "name": "weather",
        "inputSchema": {"type": "object"},
        "annotations": {"readOnlyHint": True},
    }
    answer(b, 2, {"tools": [tool], "nextCursor": "c2", **CACHE})
    b.request(
        "tools/call",
        {"name": "weather", "arguments": {"city": "Paris"}},
        id=3,
        meta={**modern_meta(), "progressToken": "p3"},
    )
    b.notify("notifications/progress", {"progressToken": "p3", "progress": 0.5, "total": 1})
    answer(b, 3, {"content": TEXT, "structuredContent": {"t": 21.5}, "isError": False})
    b.request("resources/read", {"uri": "file:///a.png"}, id=4)
    blob = {"uri": "file:///a.png", "mimeType": "image/png", "blob": "iVBORw0KGgo="}
    answer(b, 4, {"contents": [blob], **CACHE})
    b.request("prompts/get", {"name": "review", "arguments": {"code": "x = 1"}}, id=5)
    message = {
        "role": "user",
        "content": {"type": "resource", "resource": {"uri": "a", "text": "t"}},
    }
    answer(b, 5, {"messages": [message]})
    b.request(
        "completion/complete",
        {
            "ref": {"type": "ref/prompt", "name": "review"},
            "argument": {"name": "code", "value": "x"},
        },
        id=6,
    )
    answer(b, 6, {"completion": {"values": ["x = 1"], "hasMore": False}})
    b.request("subscriptions/listen", {"notifications": {"toolsListChanged": True}}, id=7)
    sub = {"io.modelcontextprotocol/subscriptionId": 7}
    b.notify(
        "notifications/subscriptions/acknowledged",
        {"notifications": {"toolsListChanged": True}, "_meta": sub},
    )
    b.notify("notifications/tools/list_changed", {"_meta": sub})
    b.notify("notifications/cancelled", {"requestId": 7}, dir="s2c")
    violations = family(b.records)
    assert violations == [], shown(violations)


def test_a_conformant_legacy_conversation_is_clean() -> None:
    b = RecordBuilder()
    initialize(b)
    b.request("tools/list", id=1)
    b.result(
        1,
        {
            "tools": [
                {
                    "name": "t",
                    "inputSchema": {"type": "object", "properties": {}},
                    "outputSchema": {"type": "object"},
                }
            ]
        },
    )
    b.request("tools/call", {"name": "t", "arguments": {}, "_meta": {"progressToken": 5}}, id=2)
    b.request(
        "sampling/createMessage",
        {"messages": [{"role": "user", "content": TEXT[0]}], "maxTokens": 50},
        id="s1",
        dir="s2c",
    )
    b.result(
        "s1",
        {
            "role": "assistant",
            "content": {"type": "text", "text": "hi"},
            "model": "m",
            "stopReason": "endTurn",
        },
        dir="c2s",
    )
    b.request(
        "elicitation/create",
        {"mode": "url", "message": "Log in", "url": "https://x", "elicitationId": "e1"},
        id="e",
        dir="s2c",
    )
    b.result("e", {"action": "accept"}, dir="c2s")
    b.notify("notifications/elicitation/complete", {"elicitationId": "e1"})
    b.notify("notifications/progress", {"progressToken": 5, "progress": 1})
    b.notify("notifications/message", {"level": "info", "data": {"msg": "ok"}})
    b.result(2, {"content": TEXT, "structuredContent": {"ok": True}})
    b.request("roots/list", id="r", dir="s2c")
    b.result("r", {"roots": [{"uri": "file:///home", "name": "home"}]}, dir="c2s")
    b.request("ping", id="p", dir="s2c")
    b.result("p", {}, dir="c2s")
    b.request("logging/setLevel", {"level": "debug"}, id=3)
    b.result(3, {})
    violations = family(b.records)
    assert violations == [], shown(violations)
