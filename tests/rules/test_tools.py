"""Tools, caching and resources rules: schemas, names, order, x-mcp-header, cache hints, reads."""

from __future__ import annotations

import json
import socket
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from inspector.records import AnyRecord
from inspector.testing.records import RecordBuilder
from rules.engine import Reported
from rules.testing import lint_records
from rules.tools import (
    MAX_SCHEMA_DEPTH,
    SchemaChecker,
    header_annotations,
    risky_regex,
    schema_shape_problem,
)

PREFIXES = ("cache.", "tools.", "resources.")
CRASHED = tuple(f"rule {p}" for p in PREFIXES)
EXAMPLES = Path("/work/shared/spec/2026-07-28/examples")
CACHE = {"ttlMs": 60000, "cacheScope": "public"}


def family(records: list[AnyRecord]) -> list[Reported]:
    return [
        v
        for v in lint_records(records)
        if v.rule.startswith(PREFIXES)
        or (v.rule == "inspector.rule-crashed" and v.message.startswith(CRASHED))
    ]


def found(records: list[AnyRecord], rule: str) -> list[Reported]:
    return [v for v in family(records) if v.rule == rule]


def shown(violations: list[Reported]) -> str:
    return "\n".join(f"{v.rule} {v.msgs}: {v.message}" for v in violations)


def example(name: str) -> Any:
    path = EXAMPLES / name
    if not path.exists():
        pytest.skip(f"spec example {name} not available")
    return json.loads(path.read_text())


WEATHER: dict[str, Any] = {
    "name": "get_weather_data",
    "inputSchema": {
        "type": "object",
        "properties": {"location": {"type": "string"}},
        "required": ["location"],
    },
    "outputSchema": {
        "type": "object",
        "properties": {
            "temperature": {"type": "number"},
            "conditions": {"type": "string"},
            "humidity": {"type": "number"},
        },
        "required": ["temperature", "conditions", "humidity"],
    },
}
GOOD_WEATHER = {"temperature": 22.5, "conditions": "Partly cloudy", "humidity": 65}


def listed(b: RecordBuilder, tools: list[dict[str, Any]], *, id: int = 1, **extra: Any) -> int:
    """A tools/list round trip; returns the result's seq."""
    b.request("tools/list", id=id)
    body: dict[str, Any] = {"tools": tools, **extra}
    if b.modern:
        body = {**CACHE, **body}
    b.result(id, body)
    return b.last.seq


def call(
    b: RecordBuilder, name: str, arguments: dict[str, Any], result: dict[str, Any], *, id: int
) -> tuple[int, int]:
    req = b.request("tools/call", {"name": name, "arguments": arguments}, id=id)
    res = b.result(id, result)
    return req.seq, res.seq


# -- a conformant conversation in each era -------------------------------------------------------


def test_conformant_modern_conversation_is_clean() -> None:
    b = RecordBuilder(modern=True)
    b.request("server/discover", id=1)
    b.result(1, example("DiscoverResult/server-capabilities-discovery.json"))
    tools = [WEATHER, example("Tool/tool-with-array-output-schema.json")]
    tools.append(example("Tool/with-explicit-draft-07-input-schema.json"))
    tools.append(
        {
            "name": "execute_sql",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "region": {"type": "string", "x-mcp-header": "Region"},
                    "query": {"type": "string"},
                },
            },
        }
    )
    listed(b, tools, id=2, nextCursor="c1")
    b.request("tools/list", {"cursor": "c1"}, id=3)
    b.result(3, {"tools": [], **CACHE})
    call(
        b,
        "get_weather_data",
        {"location": "Paris"},
        {"content": [], "structuredContent": GOOD_WEATHER},
        id=4,
    )
    array = example("CallToolResult/result-with-array-structured-content.json")
    call(b, "list_users", {}, array, id=5)
    call(b, "calculate_sum", {"a": 1, "b": 2}, {"content": []}, id=6)
    call(b, "get_weather_data", {"location": "x"}, {"content": [], "isError": True}, id=7)
    listed(b, tools, id=8, nextCursor="c1")  # same order again
    b.request("resources/list", id=9)
    b.result(9, {"resources": [{"uri": "file:///project/src/main.rs", "name": "main"}], **CACHE})
    b.request("resources/read", {"uri": "file:///project/src/main.rs"}, id=10)
    b.result(10, example("ReadResourceResult/file-resource-contents.json"))
    b.request("resources/read", {"uri": "file:///big"}, id=11)
    b.input_required(11, state="s1")
    assert family(b.records) == [], shown(family(b.records))


def test_conformant_legacy_conversation_is_clean() -> None:
    b = RecordBuilder()
    b.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}}, id=0)
    b.result(0, {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}})
    b.notify("notifications/initialized", dir="c2s")
    listed(b, [WEATHER], id=1)  # no cache fields: a legacy server has none
    call(
        b,
        "get_weather_data",
        {"location": "Paris"},
        {"content": [], "structuredContent": GOOD_WEATHER},
        id=2,
    )
    b.request("resources/read", {"uri": "file:///x"}, id=3)
    b.result(3, {"contents": []})  # no resources/list seen: nothing to infer from
    assert family(b.records) == [], shown(family(b.records))


# -- cache.fields-missing --------------------------------------------------------------------------


def test_cache_fields_missing_fires_on_a_list_without_hints() -> None:
    b = RecordBuilder(modern=True)
    req = b.request("prompts/list", id=2)
    res = b.result(2, {"prompts": []})
    (v,) = found(b.records, "cache.fields-missing")
    assert v.msgs == [req.seq, res.seq]
    assert "result for prompts/list (id 2) has no ttlMs and no cacheScope" in v.message


def test_cache_fields_must_be_well_formed() -> None:
    b = RecordBuilder(modern=True)
    b.request("resources/templates/list", id=1)
    b.result(1, {"resourceTemplates": [], "ttlMs": -5, "cacheScope": "shared"})
    b.request("server/discover", id=2)
    b.result(
        2,
        {
            "supportedVersions": ["2026-07-28"],
            "capabilities": {},
            "ttlMs": 1.5,
            "cacheScope": "private",
        },
    )
    first, second = found(b.records, "cache.fields-missing")
    assert "ttlMs -5 (must be an integer ≥ 0)" in first.message
    assert 'cacheScope "shared"' in first.message
    assert "server/discover" in second.message and "ttlMs 1.5" in second.message


def test_cache_fields_near_misses() -> None:
    b = RecordBuilder(modern=True)
    b.request("resources/read", {"uri": "file:///a"}, id=1)
    b.input_required(1, state="s")  # interim results carry no caching hints
    b.request("tools/call", {"name": "t"}, id=2)
    b.result(2, {"content": []})  # not a cacheable method
    b.request("tools/list", id=3)
    b.result(3, {"tools": [], "ttlMs": 0, "cacheScope": "private"})  # ttl 0 is fine
    b.request("tools/list", id=4)
    b.error(4, -32603)
    assert found(b.records, "cache.fields-missing") == []
    legacy = RecordBuilder()
    legacy.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}}, id=0)
    legacy.result(0, {"protocolVersion": "2025-11-25", "capabilities": {}})
    legacy.request("tools/list", id=1)
    legacy.result(1, {"tools": []})
    assert found(legacy.records, "cache.fields-missing") == []


# -- cache.scope-changed ---------------------------------------------------------------------------


def test_cache_scope_changed_between_pages() -> None:
    b = RecordBuilder(modern=True)
    b.request("resources/list", id=1)
    first = b.result(1, {"resources": [], "nextCursor": "p2", "ttlMs": 1, "cacheScope": "private"})
    b.request("resources/list", {"cursor": "p2"}, id=2)
    b.result(2, {"resources": [], "nextCursor": "p3", "ttlMs": 1, "cacheScope": "private"})
    b.request("resources/list", {"cursor": "p3"}, id=3)
    last = b.result(3, {"resources": [], "ttlMs": 1, "cacheScope": "public"})
    (v,) = found(b.records, "cache.scope-changed")
    assert v.msgs == [first.seq, last.seq]
    assert 'cacheScope "public", the list\'s first page had "private"' in v.message


def test_cache_scope_near_misses() -> None:
    b = RecordBuilder(modern=True)
    b.request("tools/list", id=1)
    b.result(1, {"tools": [], "nextCursor": "p2", "ttlMs": 1, "cacheScope": "public"})
    b.request("tools/list", {"cursor": "p2"}, id=2)
    b.result(2, {"tools": [], "ttlMs": 5, "cacheScope": "public"})  # another ttl is fine
    b.request("tools/list", id=3)  # a new listing from the start may change scope
    b.result(3, {"tools": [], "ttlMs": 1, "cacheScope": "private"})
    b.request("prompts/list", {"cursor": "p2"}, id=4)  # same cursor, another list
    b.result(4, {"prompts": [], "ttlMs": 1, "cacheScope": "private"})
    assert found(b.records, "cache.scope-changed") == []


# -- tools.output-schema ---------------------------------------------------------------------------


def test_output_schema_violation_names_the_path() -> None:
    b = RecordBuilder(modern=True)
    list_seq = listed(b, [WEATHER])
    bad = {**GOOD_WEATHER, "temperature": "hot"}
    req, res = call(
        b,
        "get_weather_data",
        {"location": "Paris"},
        {"content": [], "structuredContent": bad},
        id=5,
    )
    (v,) = found(b.records, "tools.output-schema")
    assert v.msgs == [list_seq, req, res]
    assert v.severity == "error"
    assert "structuredContent.temperature: 'hot' is not of type 'number'" in v.message
    assert "get_weather_data (id 5)" in v.message


def test_output_schema_in_the_legacy_era_and_missing_content() -> None:
    b = RecordBuilder()
    b.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}}, id=0)
    b.result(0, {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}})
    listed(b, [WEATHER])
    call(
        b,
        "get_weather_data",
        {"location": "P"},
        {"content": [], "structuredContent": {"temperature": 1}},
        id=2,
    )
    call(b, "get_weather_data", {"location": "P"}, {"content": []}, id=3)
    first, second = found(b.records, "tools.output-schema")
    assert "structuredContent: 'conditions' is a required property" in first.message
    assert "has no structuredContent although the tool declares an outputSchema" in second.message


def test_output_schema_caps_the_errors() -> None:
    props = {f"p{i}": {"type": "integer"} for i in range(20)}
    tool = {
        "name": "many",
        "inputSchema": {"type": "object"},
        "outputSchema": {"type": "object", "properties": props},
    }
    b = RecordBuilder(modern=True)
    listed(b, [tool])
    call(
        b, "many", {}, {"content": [], "structuredContent": {f"p{i}": "x" for i in range(20)}}, id=2
    )
    (v,) = found(b.records, "tools.output-schema")
    assert v.message.count("is not of type 'integer'") == 5
    assert v.message.endswith("(and more)")


def test_output_schema_near_misses() -> None:
    b = RecordBuilder(modern=True)
    listed(b, [WEATHER, {"name": "plain", "inputSchema": {"type": "object"}}])
    call(b, "plain", {}, {"content": [], "structuredContent": {"anything": True}}, id=2)
    call(b, "unlisted", {}, {"content": [], "structuredContent": 5}, id=3)
    call(b, "get_weather_data", {"location": "P"}, {"content": [], "isError": True}, id=4)
    b.request("tools/call", {"name": "get_weather_data", "arguments": {"location": "P"}}, id=5)
    b.input_required(5, state="s")
    b.request(
        "tools/call",
        {"name": "get_weather_data", "arguments": {"location": "P"}, "requestState": "s"},
        id=6,
    )
    b.result(6, {"content": [], "structuredContent": GOOD_WEATHER})
    draft7 = {
        "name": "d7",
        "inputSchema": {"type": "object"},
        "outputSchema": {
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "properties": {"n": {"type": "integer"}},
            "definitions": {"x": {"type": "string"}},
        },
    }
    unknown = {
        "name": "odd",
        "inputSchema": {"type": "object"},
        "outputSchema": {"$schema": "https://example.com/my-dialect", "type": "object"},
    }
    invalid = {
        "name": "invalid",
        "inputSchema": {"type": "object"},
        "outputSchema": {"type": "object", "required": "abc"},  # not a valid schema: skip
    }
    listed(b, [draft7, unknown, invalid], id=7)
    call(b, "d7", {}, {"content": [], "structuredContent": {"n": 3}}, id=8)
    call(b, "odd", {}, {"content": [], "structuredContent": []}, id=9)  # dialect unknown: skip
    call(b, "invalid", {}, {"content": [], "structuredContent": {}}, id=10)
    assert found(b.records, "tools.output-schema") == [], shown(family(b.records))


def test_external_ref_is_never_fetched(monkeypatch: pytest.MonkeyPatch) -> None:
    attempts: list[Any] = []

    def no_network(*args: Any, **kwargs: Any) -> Any:
        attempts.append(args)  # recorded: a wrapped exception would hide the attempt
        raise AssertionError(f"network access attempted: {args!r}")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    monkeypatch.setattr(socket, "create_connection", no_network)
    monkeypatch.setattr(socket, "getaddrinfo", no_network)
    monkeypatch.setattr(urllib.request, "urlopen", no_network)
    tool = {
        "name": "remote",
        "inputSchema": {"type": "object"},
        "outputSchema": {
            "type": "object",
            "properties": {"x": {"$ref": "https://example.com/x.json"}},
        },
    }
    b = RecordBuilder(modern=True)
    listed(b, [tool])
    call(b, "remote", {}, {"content": [], "structuredContent": {"x": 1}}, id=2)
    (v,) = found(b.records, "tools.output-schema")
    assert v.severity == "warning"
    assert "https://example.com/x.json" in v.message and "never fetched" in v.message
    assert attempts == []
    # The trap works: jsonschema's default registry would have fetched the URI.
    from jsonschema import Draft202012Validator

    with pytest.raises(Exception):  # noqa: B017
        list(Draft202012Validator(tool["outputSchema"]).iter_errors({"x": 1}))
    assert attempts


def test_a_deeply_nested_schema_is_refused_quickly() -> None:
    depth = 150  # 300 JSON levels: far beyond the bound, still decodable
    schema = '{"type":"object","properties":{"a":' * depth + '{"type":"string"}' + "}}" * depth
    tool = '{"name":"deep","inputSchema":{"type":"object"},"outputSchema":' + schema + "}"
    instance = '{"a":' * depth + "1" + "}" * depth
    b = RecordBuilder(modern=True)
    b.request("tools/list", id=1)
    b.raw(
        '{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","ttlMs":0,'
        f'"cacheScope":"public","tools":[{tool}]}}}}',
        "s2c",
    )
    b.request("tools/call", {"name": "deep", "arguments": {}}, id=2)
    b.raw(
        '{"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","content":[],'
        f'"structuredContent":{instance}}}}}',
        "s2c",
    )
    started = time.perf_counter()
    assert found(b.records, "tools.output-schema") == []  # refused: no finding
    assert time.perf_counter() - started < 5.0


def test_schema_bounds_are_checked_iteratively_and_early() -> None:
    deep: dict[str, Any] = {}
    for _ in range(100_000):  # would overflow any recursive walk
        deep = {"not": deep}
    started = time.perf_counter()
    assert schema_shape_problem(deep) == f"schema nested deeper than {MAX_SCHEMA_DEPTH} levels"
    wide = {"anyOf": [{"type": "string"} for _ in range(50_000)]}
    assert schema_shape_problem(wide) == "schema has more than 10000 subschemas"
    assert time.perf_counter() - started < 1.0
    checker = SchemaChecker()
    assert checker.check("c", "deep", deep, {}, "structuredContent") is None
    assert checker.skipped[("c", "deep", "refused")].startswith("schema nested deeper")


def test_a_ref_fan_out_stops_at_the_step_budget() -> None:
    defs: dict[str, Any] = {"d40": {"type": "integer"}}
    for i in range(40):  # 2**40 paths through 80 small subschemas
        nxt = {"$ref": f"#/$defs/d{i + 1}"}
        defs[f"d{i}"] = {"anyOf": [{**nxt, "minimum": 1}, {**nxt, "maximum": -1}]}
    schema = {"$defs": defs, "$ref": "#/$defs/d0"}
    checker = SchemaChecker()
    started = time.perf_counter()
    assert checker.check("c", "bomb", schema, 0, "structuredContent") is None
    assert time.perf_counter() - started < 3.0
    assert checker.skipped[("c", "bomb", "budget")].startswith("more than")
    ok = checker.check(
        "c", "small", {"type": "array", "items": {"type": "integer"}}, [1] * 500, "x"
    )
    assert ok is not None and ok.errors == []


def test_validators_are_cached_per_conversation_tool_and_schema() -> None:
    checker = SchemaChecker()
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}}
    first = checker.validator("c", "t", schema)
    assert first is not None
    assert checker.validator("c", "t", schema) is first
    assert checker.validator("c", "t", json.loads(json.dumps(schema))) is first  # same hash
    assert checker.validator("other", "t", schema) is not first


def test_risky_patterns_are_not_matched() -> None:
    assert risky_regex("(a+)+$")
    assert risky_regex("^(a|aa)*$")
    assert risky_regex("((ab)*c)+")
    assert not risky_regex("^[a-z]+$")
    assert not risky_regex("(ab)+")
    assert not risky_regex(r"\(a+\)+")
    checker = SchemaChecker()
    schema = {"type": "string", "pattern": "^(a+)+$"}
    started = time.perf_counter()
    outcome = checker.check("c", "t", schema, "a" * 40 + "!", "x")
    assert outcome is not None and outcome.errors == []
    assert time.perf_counter() - started < 1.0
    plain = checker.check("c", "u", {"type": "string", "pattern": "^[0-9]+$"}, "12a", "x")
    assert plain is not None and plain.errors == ["x: '12a' does not match '^[0-9]+$'"]


def test_without_jsonschema_the_schema_rules_do_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "jsonschema.validators", None)
    b = RecordBuilder(modern=True)
    listed(b, [WEATHER])
    call(
        b,
        "get_weather_data",
        {},
        {"content": [], "structuredContent": {"temperature": "hot"}},
        id=2,
    )
    assert found(b.records, "tools.output-schema") == []
    assert found(b.records, "tools.input-schema") == []


# -- tools.input-schema ----------------------------------------------------------------------------


def test_input_schema_violation_is_info() -> None:
    b = RecordBuilder(modern=True)
    list_seq = listed(b, [WEATHER])
    req, _ = call(b, "get_weather_data", {"location": 12}, {"content": [], "isError": True}, id=3)
    (v,) = found(b.records, "tools.input-schema")
    assert v.severity == "info"
    assert v.msgs == [list_seq, req]
    assert "arguments.location: 12 is not of type 'string'" in v.message


def test_input_schema_near_misses() -> None:
    b = RecordBuilder(modern=True)
    listed(b, [WEATHER, example("Tool/with-no-parameters.json")])
    call(
        b,
        "get_weather_data",
        {"location": "P"},
        {"content": [], "structuredContent": GOOD_WEATHER},
        id=2,
    )
    b.request("tools/call", {"name": "get_current_time"}, id=3)  # no arguments: {}
    b.result(3, {"content": []})
    assert found(b.records, "tools.input-schema") == []


def test_input_schema_reports_an_mrtr_chain_once() -> None:
    b = RecordBuilder(modern=True)
    listed(b, [WEATHER])
    b.request("tools/call", {"name": "get_weather_data", "arguments": {}}, id=2)
    b.input_required(2, state="s")
    b.request(
        "tools/call", {"name": "get_weather_data", "arguments": {}, "requestState": "s"}, id=3
    )
    b.result(3, {"content": [], "isError": True})
    (v,) = found(b.records, "tools.input-schema")
    assert "'location' is a required property" in v.message


# -- tools.name-format -----------------------------------------------------------------------------


def test_tool_name_format() -> None:
    b = RecordBuilder(modern=True)
    tools = [
        {"name": "get weather", "inputSchema": {"type": "object"}},
        {"name": "x" * 129, "inputSchema": {"type": "object"}},
        {"name": "dup", "inputSchema": {"type": "object"}},
        {"name": "dup", "inputSchema": {"type": "object"}},
        {"name": "", "inputSchema": {"type": "object"}},
    ]
    seq = listed(b, tools)
    listed(b, tools, id=2)  # the same problems are not reported twice
    (v,) = found(b.records, "tools.name-format")
    assert v.msgs == [seq] and v.severity == "warning"
    assert "'get weather'" not in v.message  # names are shown as JSON
    assert '"get weather" has characters outside A-Za-z0-9_-. (" ")' in v.message
    assert "129 characters long (max 128)" in v.message
    assert '"dup" appears more than once' in v.message
    assert "empty tool name" in v.message


def test_tool_name_format_near_miss() -> None:
    b = RecordBuilder()
    names = ["getUser", "DATA_EXPORT_v2", "admin.tools.list", "a-b", "x" * 128]
    listed(b, [{"name": n, "inputSchema": {"type": "object"}} for n in names])
    assert found(b.records, "tools.name-format") == []


# -- tools.order-unstable --------------------------------------------------------------------------


def test_tools_order_unstable() -> None:
    b = RecordBuilder(modern=True)
    a, c = ({"name": n, "inputSchema": {"type": "object"}} for n in ("a", "c"))
    first = listed(b, [a, c])
    second = listed(b, [c, a], id=2)
    (v,) = found(b.records, "tools.order-unstable")
    assert v.msgs == [first, second]
    assert "same 2 tools as the previous listing in a different order" in v.message


def test_tools_order_near_misses() -> None:
    a, c, d = ({"name": n, "inputSchema": {"type": "object"}} for n in ("a", "c", "d"))
    b = RecordBuilder(modern=True)
    listed(b, [a, c])
    listed(b, [a, c], id=2)
    listed(b, [d, c, a], id=3)  # the set changed
    listed(b, [d, c, a], id=4)
    assert found(b.records, "tools.order-unstable") == []
    legacy = RecordBuilder()
    legacy.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}}, id=0)
    legacy.result(0, {"protocolVersion": "2025-11-25", "capabilities": {}})
    listed(legacy, [a, c])
    listed(legacy, [c, a], id=2)  # a modern SHOULD only
    assert found(legacy.records, "tools.order-unstable") == []


# -- tools.x-mcp-header ----------------------------------------------------------------------------


def test_x_mcp_header_constraints() -> None:
    schema = {
        "type": "object",
        "properties": {
            "region": {"type": "string", "x-mcp-header": "Re gion"},
            "ratio": {"type": "number", "x-mcp-header": "Ratio"},
            "tags": {"type": "array", "items": {"type": "string", "x-mcp-header": "Tag"}},
            "a": {"type": "string", "x-mcp-header": "Same"},
            "b": {"type": "boolean", "x-mcp-header": "same"},
            "c": {"type": "string", "x-mcp-header": ""},
        },
        "anyOf": [{"properties": {"d": {"type": "string", "x-mcp-header": "D"}}}],
    }
    b = RecordBuilder(modern=True)
    seq = listed(b, [{"name": "bad", "inputSchema": schema}])
    (v,) = found(b.records, "tools.x-mcp-header")
    assert v.msgs == [seq]
    assert v.message.startswith('tool "bad": x-mcp-header "D" at inputSchema.anyOf[0].properties.d')
    assert "is not on a property reachable through `properties` alone" in v.message
    assert "(and 2 more) (clients MUST exclude this tool)" in v.message  # 7 bad, 5 shown
    listed(b, [{"name": "bad", "inputSchema": schema}], id=2)  # not reported again
    assert len(found(b.records, "tools.x-mcp-header")) == 1
    annotations = {a.where: a.problems for a in header_annotations(schema) or []}
    assert annotations["inputSchema.properties.ratio"] == (
        "is on a `number` parameter (only integer, string, boolean)",
    )
    assert (
        "is not on a property reachable through `properties` alone"
        in annotations["inputSchema.properties.tags.items"]
    )
    assert (
        "is not on a property reachable through `properties` alone"
        in annotations["inputSchema.anyOf[0].properties.d"]
    )
    assert annotations["inputSchema.properties.a"] == ("is not unique (case-insensitive)",)
    assert annotations["inputSchema.properties.c"] == ("is empty",)
    assert annotations["inputSchema.properties.region"] == ("is not an HTTP field-name token",)


def test_x_mcp_header_near_misses() -> None:
    schema = {
        "type": "object",
        "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "nested": {
                "type": "object",
                "properties": {"id": {"type": ["integer", "null"], "x-mcp-header": "Id"}},
            },
            "mode": {"enum": ["a", "b"], "x-mcp-header": "Mode"},
            "x-mcp-header": {"type": "object"},  # a property *named* x-mcp-header
            "opts": {"type": "object", "default": {"x-mcp-header": "not a schema"}},
        },
    }
    b = RecordBuilder(modern=True)
    listed(b, [{"name": "ok", "inputSchema": schema}])
    assert found(b.records, "tools.x-mcp-header") == []
    annotations = header_annotations(schema) or []
    assert sorted(a.chain or () for a in annotations) == [("mode",), ("nested", "id"), ("region",)]


# -- resources.empty-not-found ---------------------------------------------------------------------


def test_empty_contents_for_an_unknown_uri() -> None:
    b = RecordBuilder(modern=True)
    b.request("resources/list", id=1)
    b.result(1, {"resources": [{"uri": "file:///a.txt", "name": "a"}], **CACHE})
    req = b.request("resources/read", {"uri": "file:///nonexistent.txt"}, id=2)
    res = b.result(2, {"contents": [], **CACHE})
    (v,) = found(b.records, "resources.empty-not-found")
    assert v.msgs == [req.seq, res.seq] and v.severity == "warning"
    assert '"file:///nonexistent.txt" (id 2) returned an empty contents array' in v.message
    assert "error -32602" in v.message


def test_empty_contents_near_misses() -> None:
    b = RecordBuilder(modern=True)
    b.request("resources/list", id=1)
    b.result(1, {"resources": [{"uri": "file:///empty.txt", "name": "e"}], **CACHE})
    b.request("resources/templates/list", id=2)
    b.result(2, {"resourceTemplates": [{"uriTemplate": "db://{table}/{id}", "name": "t"}], **CACHE})
    b.request("tools/call", {"name": "t"}, id=3)
    b.result(3, {"content": [{"type": "resource_link", "uri": "mem://linked", "name": "l"}]})
    for i, uri in enumerate(("file:///empty.txt", "db://users/7", "mem://linked"), start=4):
        b.request("resources/read", {"uri": uri}, id=i)
        b.result(i, {"contents": [], **CACHE})
    b.request("resources/read", {"uri": "file:///other"}, id=9)
    b.result(9, {"contents": [{"uri": "file:///other", "text": ""}], **CACHE})
    assert found(b.records, "resources.empty-not-found") == []
