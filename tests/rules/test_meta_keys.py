"""``_meta`` key names: meta.key-format."""

from __future__ import annotations

import json

import pytest

from mcpeek.inspector.testing.records import RecordBuilder
from mcpeek.rules.families.meta_keys import key_problem
from tests.rules.test_meta import EXAMPLES, found, legacy
from tests.rules.test_results import SERVER_META, answer, discovered


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
    b = discovered()
    count = 0
    for path in sorted(EXAMPLES.glob("*/*.json")):
        value = json.loads(path.read_text())
        count += 1
        b.notify("notifications/vendor/example", {"example": value})
    assert count > 50
    assert found(b.records, "meta.key-format") == []


def test_server_meta_constant_is_conformant() -> None:
    assert key_problem(next(iter(SERVER_META))) is None
