"""The gate's envelope check: on a message the gate turns away, the envelope's rules are
skipped only when its envelope is certainly sound, and never so as to hide a finding."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mcpeek.inspector.analysis import Analyzer
from mcpeek.inspector.testing.records import MODERN, RecordBuilder
from mcpeek.rules.base import Finding, Rule
from mcpeek.rules.engine import GATE_UNSOUND, Reported, RuleEngine
from mcpeek.rules.gate import Gate
from mcpeek.rules.gate_envelope import build_envelope_check
from mcpeek.rules.verify import VerifiedRuleEngine

SERVER_META = {"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}}
#: An input_required result whose elicitation schema lacks ``properties`` (the
#: 2026-07-28 schema requires it) and which has no serverInfo: the benchmark's odd one.
ODD_RESULT = {
    "resultType": "input_required",
    "requestState": "s",
    "inputRequests": {
        "ok": {
            "method": "elicitation/create",
            "params": {"mode": "form", "message": "Sure?", "requestedSchema": {"type": "object"}},
        }
    },
}


def sound(
    message: Any, kind: str = "result", method: str | None = "tools/call", **where: Any
) -> bool:
    era = where.get("era", "modern")
    version = where.get("version", MODERN if era == "modern" else "2025-11-25")
    direction = where.get("direction", "c2s" if kind == "request" else "s2c")
    check = build_envelope_check(era, version, kind, method, direction)
    if check is None:
        return False
    text = message if isinstance(message, str) or message is None else json.dumps(message)
    return check(text)


def result(body: Any = None, **envelope: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 3, "result": ODD_RESULT if body is None else body, **envelope}


def test_a_payload_the_gate_turns_away_can_still_have_a_sound_envelope() -> None:
    text = json.dumps(result())
    assert not Gate().accepts(text, "modern", MODERN, "result", "tools/call", "s2c")
    assert sound(result())
    assert sound(result({"resultType": "complete", "content": "not a list"}))
    request = {"jsonrpc": "2.0", "id": "a", "method": "tools/call", "params": {"name": 5}}
    assert sound(request, "request")
    note = {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progress": "x"}}
    assert sound(note, "notification", "notifications/progress")
    assert sound({"jsonrpc": "2.0", "id": 1, "error": {"code": "odd"}}, "error")
    legacy = {"jsonrpc": "2.0", "id": 1, "result": {"tools": 7}}  # no resultType in legacy
    assert sound(legacy, method="tools/list", era="legacy")


@pytest.mark.parametrize(
    "message",
    [
        result(jsonrpc="1.0"),
        {"id": 3, "result": ODD_RESULT},
        result(id=None),
        result(id=1.5),
        result(extra=1),
        result([]),
        result({"content": []}),  # modern: no resultType
        result({"resultType": "other"}),
        result({"resultType": 1}),
    ],
)
def test_an_envelope_the_rules_would_speak_of_is_not_sound(message: dict[str, Any]) -> None:
    assert not sound(message)


def test_what_it_cannot_read_or_has_no_spec_for_is_not_sound() -> None:
    assert not sound(None)  # not UTF-8: kept as base64
    assert not sound(" " + json.dumps(result()))
    assert not sound("[" + json.dumps(result()) + "]")
    deep = result({"resultType": "complete", "x": [[[[[]]]]] * 300})
    assert not sound(deep)  # more brackets than a decode into values is sure to build
    assert not sound(result(), method="vendor/thing")  # method.unknown, to-notification…
    assert not sound(result(), direction="c2s")  # a modern client answers nothing
    assert not sound(result(), era=None)


# -- the engine with the envelope check ---------------------------------------------------
class _EnvelopeLiar(Rule):
    """Finds something on every result, yet claims the gate and its envelope check silence it."""

    gated = frozenset({"result"})
    envelope_gated = frozenset({"result"})
    kinds = frozenset({"result"})

    def on_message(self, ctx: Any) -> list[Finding]:
        return [ctx.finding("always")]


_EnvelopeLiar.id = "test.envelope-liar"  # set after the class exists: not in the catalog
_EnvelopeLiar.spec = "https://modelcontextprotocol.io/specification/2026-07-28/basic#x"


def _odd_answer(times: int = 1) -> list[Any]:
    b = RecordBuilder(modern=True)
    b.request("tools/list", {}, id=1)  # (a first exchange: the era is known from then on)
    b.result(1, {"tools": [], "ttlMs": 0, "cacheScope": "private"})
    b.request("tools/call", {"name": "deploy", "arguments": {}}, id=3)
    for _ in range(times):
        b.send(result(), "s2c")  # (as it is: no serverInfo added)
    return b.records


def _run(records: list[Any], engine_class: type[RuleEngine], **options: Any) -> list[Reported]:
    found: list[Reported] = []
    analyzer = Analyzer([engine_class(found.append, rules=[_EnvelopeLiar], **options)])
    analyzer.feed_all(records)
    analyzer.finish()
    return found


def test_an_envelope_gated_rule_is_skipped_and_verify_catches_a_liar() -> None:
    records = _odd_answer()  # seq 2: a conformant result, seq 4: the odd one
    assert _run(records, RuleEngine) == []  # accepted, then turned away but sound: skipped
    without = _run(records, RuleEngine, gate=False)
    liar = "test.envelope-liar"
    assert [(v.rule, v.msgs) for v in without] == [(liar, [2]), (liar, [4])]
    verified = _run(records, VerifiedRuleEngine)
    assert [(v.rule, v.msgs) for v in verified] == [(GATE_UNSOUND, [2]), (GATE_UNSOUND, [4])]
    assert liar in verified[1].message


def test_a_response_must_also_be_a_plain_answer() -> None:
    found = [v.msgs for v in _run(_odd_answer(times=2), RuleEngine)]  # a second answer
    assert found == [[5]]  # the liar is called on the second answer only (no plain one)


def test_the_odd_result_gets_the_same_findings_with_and_without_the_gate() -> None:
    def lint(gate: bool) -> list[tuple[str, tuple[int, ...], str]]:
        found: list[Reported] = []
        analyzer = Analyzer([RuleEngine(found.append, gate=gate)])
        analyzer.feed_all(_odd_answer())
        analyzer.finish()
        return [(v.rule, tuple(v.msgs), v.message) for v in found]

    found = lint(gate=True)
    assert found == lint(gate=False)
    assert {"schema.result", "meta.server-info-missing"} <= {rule for rule, _, _ in found}
