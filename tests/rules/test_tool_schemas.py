"""Tool schema rules: arguments and structuredContent against the declared schemas."""

from __future__ import annotations

import json
import re
import socket
import sys
import urllib.request
from typing import Any

import pytest

from mcpeek.inspector.testing.records import RecordBuilder
from mcpeek.rules.engine import RuleEngine
from mcpeek.rules.families._bounded import Lru
from mcpeek.rules.families._toolschema.bounds import MAX_STEPS
from mcpeek.rules.families.tool_schemas import (
    MAX_SCHEMA_DEPTH,
    SchemaChecker,
    ToolsInputSchema,
    ToolsOutputSchema,
    risky_regex,
    schema_shape_problem,
)
from mcpeek.rules.families.tools import ToolsNameFormat, ToolsOrderUnstable
from mcpeek.rules.testing import lint_records
from tests.rules.test_tools import (
    GOOD_WEATHER,
    WEATHER,
    call,
    example,
    family,
    found,
    listed,
    shown,
)

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


def test_a_deeply_nested_schema_is_refused_quickly(monkeypatch: pytest.MonkeyPatch) -> None:
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
    compiled: list[object] = []
    compile_schema = SchemaChecker._compile
    monkeypatch.setattr(
        SchemaChecker,
        "_compile",
        lambda self, schema: compiled.append(schema) or compile_schema(self, schema),
    )
    assert found(b.records, "tools.output-schema") == []  # refused: no finding
    # The deep output schema was refused by its bounds before anything compiled or
    # walked it (the small inputSchema is compiled, as usual).
    assert compiled and all(schema == {"type": "object"} for schema in compiled)


class _Visited(dict[str, Any]):
    """A schema object that counts how often the bounds walk opens it."""

    opened = 0

    def values(self) -> Any:
        _Visited.opened += 1
        return super().values()


def test_schema_bounds_are_checked_iteratively_and_early() -> None:
    deep: dict[str, Any] = {}
    for _ in range(100_000):  # would overflow any recursive walk
        deep = _Visited({"not": deep})
    _Visited.opened = 0
    assert schema_shape_problem(deep) == f"schema nested deeper than {MAX_SCHEMA_DEPTH} levels"
    assert _Visited.opened <= MAX_SCHEMA_DEPTH + 1  # stopped at the limit, not at the bottom
    wide = {"anyOf": [_Visited({"type": "string"}) for _ in range(50_000)]}
    _Visited.opened = 0
    assert schema_shape_problem(wide) == "schema has more than 10000 subschemas"
    assert _Visited.opened <= 10_001  # counted as it went: the other 40,000 never opened
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
    assert checker.check("c", "bomb", schema, 0, "structuredContent") is None
    # Given up at the step budget (2**40 paths would never end): the event that says so.
    assert checker.skipped[("c", "bomb", "budget")] == f"more than {MAX_STEPS} steps"
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


def test_risky_patterns_are_not_matched(monkeypatch: pytest.MonkeyPatch) -> None:
    assert risky_regex("(a+)+$")
    assert risky_regex("^(a|aa)*$")
    assert risky_regex("((ab)*c)+")
    assert not risky_regex("^[a-z]+$")
    assert not risky_regex("(ab)+")
    assert not risky_regex(r"\(a+\)+")
    checker = SchemaChecker()
    schema = {"type": "string", "pattern": "^(a+)+$"}
    searched: list[str] = []  # the patterns a regex engine was run with
    search = re.search

    def spy(pattern: str, *args: Any, **kwargs: Any) -> Any:
        searched.append(pattern)
        if pattern == "^(a+)+$":  # run, it would hang: fail at once instead
            raise AssertionError("the risky pattern was run")
        return search(pattern, *args, **kwargs)

    monkeypatch.setattr(re, "search", spy)
    outcome = checker.check("c", "t", schema, "a" * 40 + "!", "x")
    assert outcome is not None and outcome.errors == []
    assert "^(a+)+$" not in searched  # skipped, never run: 2**40 backtracking steps
    plain = checker.check("c", "u", {"type": "string", "pattern": "^[0-9]+$"}, "12a", "x")
    assert plain is not None and plain.errors == ["x: '12a' does not match '^[0-9]+$'"]
    assert "^[0-9]+$" in searched  # (a safe one is run: the count above can see)


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


def test_the_schema_rules_share_one_table_of_lists_and_each_fills_it_alone() -> None:
    # One ListedTools per engine, filled once per tools/list by whichever rule hears
    # it first; a rule run without the other fills it itself.
    engine = RuleEngine(lambda _: None, rules=[ToolsInputSchema, ToolsOutputSchema])
    first, second = engine.rules
    assert isinstance(first, ToolsInputSchema) and isinstance(second, ToolsOutputSchema)
    assert first.tools is second.tools
    b = RecordBuilder(modern=True)
    list_seq = listed(b, [WEATHER])
    req, res = call(
        b, "get_weather_data", {"location": 12}, {"content": [], "structuredContent": {}}, id=3
    )
    for rules in ([ToolsInputSchema], [ToolsOutputSchema]):
        (v,) = lint_records(b.records, rules=rules)
        assert v.msgs[0] == list_seq and v.msgs[-1] in (req, res)


def test_the_tools_rules_read_each_list_s_names_once_for_all() -> None:
    engine = RuleEngine(
        lambda _: None,
        rules=[ToolsInputSchema, ToolsOutputSchema, ToolsNameFormat, ToolsOrderUnstable],
    )
    inputs, outputs, names, order = engine.rules
    assert isinstance(inputs, ToolsInputSchema) and isinstance(outputs, ToolsOutputSchema)
    assert isinstance(names, ToolsNameFormat) and isinstance(order, ToolsOrderUnstable)
    assert inputs.tools.names is outputs.tools.names is names.names is order.names


def test_lru_put_all_keeps_what_puts_one_by_one_keep() -> None:
    for keys in (["a", "b", "c"], ["c", "x", "c", "y", "z", "a"], list("abcdefgh")):
        one_by_one: Lru[str, int] = Lru(4)
        at_once: Lru[str, int] = Lru(4)
        for lru in (one_by_one, at_once):
            for key in ("a", "b", "q"):
                lru.put(key, 1)
        for key in keys:
            one_by_one.put(key, 2)
        at_once.put_all(keys, 2)
        assert list(at_once.items()) == list(one_by_one.items()), keys


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
