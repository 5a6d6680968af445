"""The conformance gate: what it accepts, what it turns away, and that it never hides a finding.

The gate lets the engine skip the pure per-message rules on a message it
proves conformant, so a gate that accepts too much would silently lose
findings. Beyond these tests, every rule test runs a ``VerifiedRuleEngine``
(``mcpeek.rules.testing.lint_records``), so each of them also checks the gate.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpeek.inspector.capture import read_records
from mcpeek.inspector.records import Msg
from mcpeek.inspector.testing.records import MODERN, RecordBuilder, modern_meta
from mcpeek.rules.base import Finding, Rule
from mcpeek.rules.engine import GATE_UNSOUND, Reported, RuleEngine
from mcpeek.rules.gate import Gate
from mcpeek.rules.verify import VerifiedRuleEngine

CAPTURES = Path(__file__).resolve().parents[2] / "captures"
SERVER_META = {"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}}


def accepts(message: dict[str, Any], kind: str, method: str | None, **where: Any) -> bool:
    era = where.get("era", "modern")
    version = where.get("version", MODERN if era == "modern" else "2025-11-25")
    direction = where.get("direction", "c2s" if kind == "request" else "s2c")
    text = where.get("text", json.dumps(message, separators=(",", ":")))
    return Gate().accepts(text, era, version, kind, method, direction)


def call(**meta: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "add", "arguments": {"a": 1}, "_meta": modern_meta(**meta)},
    }


def failed(code: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "error": {"code": code, "message": "no"}}


def answer(**result: Any) -> dict[str, Any]:
    body = {"resultType": "complete", "content": [], "_meta": SERVER_META, **result}
    return {"jsonrpc": "2.0", "id": 1, "result": body}


# -- accepted ----------------------------------------------------------------------------
def test_accepts_conformant_modern_traffic() -> None:
    assert accepts(call(), "request", "tools/call")
    assert accepts(call(progressToken=7), "request", "tools/call")
    assert accepts(answer(), "result", "tools/call")
    progress = {"progressToken": 7, "progress": 1, "total": 2}
    note = {"jsonrpc": "2.0", "method": "notifications/progress", "params": progress}
    assert accepts(note, "notification", "notifications/progress")
    assert accepts(failed(-32602), "error", "tools/call")
    assert accepts(failed(404), "error", "tools/call")  # an application's own code
    # Deprecated, but deprecated.feature is not gated on requests and notifications:
    assert accepts(call(**{MCP + "logLevel": "info"}), "request", "tools/call")
    logged = {"level": "info", "data": "x"}
    log = {"jsonrpc": "2.0", "method": "notifications/message", "params": logged}
    assert accepts(log, "notification", "notifications/message")


def test_accepts_conformant_legacy_traffic() -> None:
    ping = {"jsonrpc": "2.0", "id": "a", "method": "ping"}
    assert accepts(ping, "request", "ping", era="legacy")
    listed = {"jsonrpc": "2.0", "id": 2, "result": {"tools": []}}
    assert accepts(listed, "result", "tools/list", era="legacy")


# -- turned away -------------------------------------------------------------------------
def without(message: dict[str, Any], *path: str) -> dict[str, Any]:
    changed = copy.deepcopy(message)
    holder = changed
    for key in path[:-1]:
        holder = holder[key]
    del holder[path[-1]]
    return changed


def replaced(message: dict[str, Any], value: Any, *path: str) -> dict[str, Any]:
    changed = copy.deepcopy(message)
    holder = changed
    for key in path[:-1]:
        holder = holder[key]
    holder[path[-1]] = value
    return changed


MCP = "io.modelcontextprotocol/"
TURNED_AWAY = {
    "jsonrpc 2.1": (replaced(call(), "2.1", "jsonrpc"), "request", "tools/call"),
    "float id": (replaced(call(), 1.0, "id"), "request", "tools/call"),
    "null id": (replaced(call(), None, "id"), "request", "tools/call"),
    "bool id": (replaced(call(), True, "id"), "request", "tools/call"),
    "no protocol version": (
        without(call(), "params", "_meta", MCP + "protocolVersion"),
        "request",
        "tools/call",
    ),
    "no client info": (
        without(call(), "params", "_meta", MCP + "clientInfo"),
        "request",
        "tools/call",
    ),
    "bad log level": (call(**{MCP + "logLevel": "loud"}), "request", "tools/call"),
    "trace context": (call(traceparent="00-zz"), "request", "tools/call"),
    "vendor key": (call(**{"com.example/x": 1}), "request", "tools/call"),
    "bad key": (call(**{"-bad": 1}), "request", "tools/call"),
    "schema": (replaced(call(), 5, "params", "name"), "request", "tools/call"),
    "extra envelope member": (replaced(call(), {}, "result"), "request", "tools/call"),
    "unknown method": (replaced(call(), "x.y/z", "method"), "request", "x.y/z"),
    "input_required": (answer(resultType="input_required"), "result", "tools/call"),
    "no resultType": (without(answer(), "result", "resultType"), "result", "tools/call"),
    "no serverInfo": (without(answer(), "result", "_meta"), "result", "tools/call"),
    "cache fields": (
        {"jsonrpc": "2.0", "id": 1, "result": {"resultType": "complete", "tools": []}},
        "result",
        "tools/list",
    ),
    "error code of MCP's range": (failed(-32010), "error", "tools/call"),
    "removed error code": (failed(-32042), "error", "tools/call"),
    "defined error code (data has a schema)": (failed(-32022), "error", "tools/call"),
    "float error code": (failed(-32602.0), "error", "tools/call"),
    "error without message": (without(failed(-32602), "error", "message"), "error", "tools/call"),
    "nested _meta only": (
        {"jsonrpc": "2.0", "id": 2, "result": {"tools": [{"name": "t", "_meta": {"-": 1}}]}},
        "result",
        "tools/list",
    ),
    "nested past the recursion limit": (
        replaced(call(), 1, "params", "arguments", "a"),
        "request",
        "tools/call",
    ),
}


@pytest.mark.parametrize("name", sorted(TURNED_AWAY))
def test_turns_away(name: str) -> None:
    message, kind, method = TURNED_AWAY[name]
    era = "legacy" if name == "nested _meta only" else "modern"
    text = json.dumps(message, separators=(",", ":"))
    if name == "nested past the recursion limit":
        text = text.replace('"a":1', '"a":' + "[" * 2000 + "]" * 2000)
    assert not accepts(message, kind, method, era=era, text=text)


def test_a_number_past_a_floats_range_is_read_alike_with_and_without_the_gate() -> None:
    # msgspec does not build 1e999; the rules read it as infinity (as the gate, which
    # skips it unread), so the message's _meta is there for both.
    b = RecordBuilder(modern=True)
    b.request("tools/call", {"name": "add", "arguments": {}, "odd": 1}, id=1)
    record = b.records[-1]
    assert isinstance(record, Msg) and record.raw is not None
    record.raw = record.raw.replace('"odd":1', '"odd":1e999')
    b.result(1, {"content": []})
    assert _lint(b.records, gate=True) == _lint(b.records, gate=False) == []


def test_turns_away_what_it_cannot_read() -> None:
    gate = Gate()
    text = json.dumps(call())
    assert not gate.accepts(None, "modern", MODERN, "request", "tools/call", "c2s")  # not UTF-8
    assert not gate.accepts(f"[{text}]", "modern", MODERN, "request", "tools/call", "c2s")
    assert not gate.accepts(" " + text, "modern", MODERN, "request", "tools/call", "c2s")
    assert not gate.accepts(text, None, None, "request", "tools/call", "c2s")  # era unknown
    assert not gate.accepts(text, "modern", MODERN, "request", "tools/call", "s2c")
    assert not Gate.may_accept("request", None)
    assert not Gate.may_accept("invalid", "legacy")


# -- the engine with the gate ------------------------------------------------------------
class _Liar(Rule):
    """Finds something on every request, yet claims to be gated (a broken rule)."""

    gated = frozenset({"request"})

    def on_message(self, ctx: Any) -> list[Finding]:
        return [ctx.finding("always")]


_Liar.id = "test.liar"  # set after the class exists: not registered in the catalog
_Liar.spec = "https://modelcontextprotocol.io/specification/2026-07-28/basic#x"


def _run(records: list[Any], **options: Any) -> list[Reported]:
    from mcpeek.inspector.analysis import Analyzer

    found: list[Reported] = []
    engine_class = VerifiedRuleEngine if options.pop("verify_gate") else RuleEngine
    analyzer = Analyzer([engine_class(found.append, rules=[_Liar], **options)])
    analyzer.feed_all(records)
    analyzer.finish()
    return found


def test_a_gated_rule_is_skipped_on_accepted_messages_and_verify_catches_a_liar() -> None:
    b = RecordBuilder(modern=True)
    b.request("tools/call", {"name": "add", "arguments": {}}, id=1)
    assert _run(b.records, verify_gate=False) == []  # skipped: the gate accepted it
    assert [v.rule for v in _run(b.records, gate=False, verify_gate=False)] == ["test.liar"]
    verified = _run(b.records, verify_gate=True)
    assert [v.rule for v in verified] == [GATE_UNSOUND]
    assert "test.liar" in verified[0].message and verified[0].msgs == [1]


def test_a_result_must_also_be_a_plain_answer() -> None:
    # Each answer below is a conformant modern result by its content; correlation makes
    # the response rules speak, so the gate must let them.
    b = RecordBuilder(modern=True)
    b.request("server/discover", {}, id=1)
    b.result(
        1, {"supportedVersions": [MODERN], "capabilities": {}, "ttlMs": 0, "cacheScope": "public"}
    )
    b.request("tools/call", {"name": "add", "arguments": {}}, id=2)
    answer = {"content": [], "_meta": SERVER_META}
    b.result(2, answer)
    b.result(2, answer)  # a second answer
    b.result(7, answer)  # answers nothing
    found = sorted(v.rule for v in _lint(b.records, gate=True))
    assert found == sorted(v.rule for v in _lint(b.records, gate=False))
    assert "response.duplicate" in found and "response.unknown-id" in found


# -- differential: gate on and off find the same, whatever one message becomes ------------
HUGE = "<an integer of 4,400 digits>"  # json.dumps cannot write it: spliced in after
ODD_VALUES = [
    HUGE,
    None,
    True,
    0,
    -1,
    1.5,
    "",
    "x",
    "2.0",
    "complete",
    "input_required",
    [],
    {},
    {"name": "n", "version": "1"},
    {"_meta": {"-": 1}},
    {"io.modelcontextprotocol/logLevel": "info"},
]
ODD_KEYS = [
    "_meta",
    "id",
    "extra",
    "resultType",
    "traceparent",
    "io.modelcontextprotocol/logLevel",
    "io.modelcontextprotocol/protocolVersion",
    "io.modelcontextprotocol/serverInfo",
    "com.example/k",
    "bad key",
    "ttlMs",
    "cacheScope",
    "task",
]


def _paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [path]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _paths(item, (*path, index))
    return found


def _mutate(value: Any, data: st.DataObject) -> Any:
    paths = _paths(value)
    path = data.draw(st.sampled_from(paths))
    action = data.draw(st.sampled_from(["drop", "replace", "add"]))
    value = copy.deepcopy(value)
    if not path:
        return value
    holder = value
    for key in path[:-1]:
        holder = holder[key]
    target = holder[path[-1]]
    if action == "add" and isinstance(target, dict):
        target[data.draw(st.sampled_from(ODD_KEYS))] = data.draw(st.sampled_from(ODD_VALUES))
    elif action == "drop" and isinstance(holder, dict):
        del holder[path[-1]]
    else:
        holder[path[-1]] = data.draw(st.sampled_from(ODD_VALUES))
    return value


def _capture(name: str) -> list[Any]:
    header, records, _ = read_records(CAPTURES / name)
    return [header, *records]


@pytest.mark.e2e  # 150 mutated captures, each linted twice
@pytest.mark.parametrize("name", ["modern-stdio.jsonl", "legacy-stdio.jsonl"])
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_gate_on_and_off_find_the_same(name: str, data: st.DataObject) -> None:
    records = _capture(name)
    messages = [i for i, r in enumerate(records) if isinstance(r, Msg) and r.raw]
    index = data.draw(st.sampled_from(messages))
    record = records[index]
    assert isinstance(record, Msg) and record.raw is not None
    mutated = _mutate(json.loads(record.raw), data)
    records[index] = Msg(
        seq=record.seq,
        t=record.t,
        dir=record.dir,
        ch=record.ch,
        raw=json.dumps(mutated, separators=(",", ":")).replace(f'"{HUGE}"', "9" * 4400),
    )

    def found(gate: bool) -> list[tuple[str, tuple[int, ...], str]]:
        return [(v.rule, tuple(v.msgs), v.message) for v in _lint(records, gate)]

    assert found(gate=True) == found(gate=False)


def _lint(records: list[Any], gate: bool) -> list[Reported]:
    from mcpeek.inspector.analysis import Analyzer

    out: list[Reported] = []
    analyzer = Analyzer([RuleEngine(out.append, gate=gate)])
    analyzer.feed_all(records)
    analyzer.finish()
    return out
