"""Tools, caching and resources rules: names, order, x-mcp-header, cache hints, reads.

The tool schema rules are tested in test_tool_schemas.py (with these helpers).
"""

from __future__ import annotations

import json
from typing import Any

from mcpeek.inspector.records import AnyRecord
from mcpeek.inspector.testing.records import RecordBuilder
from mcpeek.rules.engine import Reported
from mcpeek.rules.families.tools import all_sound, header_annotations, name_problem
from mcpeek.rules.testing import lint_records
from tests.conftest import VENDORED_SPEC

PREFIXES = ("cache.", "tools.", "resources.")
CRASHED = tuple(f"rule {p}" for p in PREFIXES)
EXAMPLES = VENDORED_SPEC / "2026-07-28" / "examples"
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
    return json.loads((EXAMPLES / name).read_text())


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


def test_a_name_that_hides_a_newline_is_not_taken_for_two_sound_names() -> None:
    # The sound lists are told at once, their names joined by newlines: a name holding
    # one is still judged on its own.
    b = RecordBuilder(modern=True)
    seq = listed(b, [{"name": "get\nweather", "inputSchema": {"type": "object"}}])
    (v,) = found(b.records, "tools.name-format")
    assert v.msgs == [seq]
    assert '"get\\nweather" has characters outside A-Za-z0-9_-. ("\\n")' in v.message


def test_all_sound_agrees_with_the_names_judged_one_by_one() -> None:
    lists = [
        (),
        ("a",),
        ("a", "a"),
        ("",),
        ("x" * 128,),
        ("x" * 129,),
        ("a\nb",),
        ("a", "b\nc"),
        ("a\n", "b"),
        ("a", ""),
        ("get weather",),
        ("é",),
        ("getUser", "DATA_EXPORT_v2", "admin.tools.list", "a-b"),
    ]
    for names in lists:
        one_by_one = len(set(names)) == len(names) and not any(map(name_problem, names))
        assert all_sound(names) is one_by_one, names


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


def test_a_result_without_links_keeps_its_conversation_among_those_remembered() -> None:
    # The rule remembers the listed URIs of MAX_CONVERSATIONS conversations, the least
    # recently seen forgotten first; a tools/call result seen counts, links or not (a
    # change here would change which empty reads are judged once many sessions are open).
    from mcpeek.rules.families._bounded import MAX_CONVERSATIONS

    b = RecordBuilder("http")
    headers = [
        ("accept", "application/json, text/event-stream"),
        ("content-type", "application/json"),
    ]
    exchanges = 0

    def post(session: str, method: str, params: dict[str, Any], result: dict[str, Any]) -> None:
        nonlocal exchanges
        exchanges += 1
        x = f"x{exchanges}"
        b.http(
            x,
            "request",
            method="POST",
            path="/mcp",
            headers=[*headers, ("mcp-session-id", session)],
        )
        b.request(method, params, id=exchanges, ch=x)
        b.http(x, "response", status=200, headers=[headers[1], ("mcp-session-id", session)])
        b.result(exchanges, result, ch=x)
        b.http(x, "end", reason="complete")

    text = {"content": [{"type": "text", "text": "hi"}]}
    post("S0", "resources/list", {}, {"resources": [{"uri": "file:///a", "name": "a"}]})
    for n in range(1, MAX_CONVERSATIONS):
        post(f"S{n}", "resources/list", {}, {"resources": []})
    post("S0", "tools/call", {"name": "t", "arguments": {}}, text)  # S0: seen last
    post(f"S{MAX_CONVERSATIONS}", "resources/list", {}, {"resources": []})  # S1 forgotten
    post("S0", "resources/read", {"uri": "file:///b"}, {"contents": []})
    (v,) = found(b.records, "resources.empty-not-found")
    assert "file:///b" in v.message
