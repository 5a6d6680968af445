"""The tracker's check of a conformant POST's response head (``_http_quiet``).

On a head that one well-formed client request waited for, the rules that only
judge client messages (``HttpRule.head_gated``) are not called: the check
proves they would find nothing and marks the exchange as they would have; on
a POST that names no session from a modern client, neither are the rules that
judge the head itself and vouch for it (``HttpRule.quiet_head``).
These tests pin that the check is used, that it stands only for the rules that
vouch for it, and that the findings are those of the rules called every time.
"""

from __future__ import annotations

from typing import Any

import pytest

from mcpeek.inspector.analysis import Analyzer
from mcpeek.inspector.records import AnyRecord
from mcpeek.rules.base import catalog
from mcpeek.rules.engine import Reported, RuleEngine
from mcpeek.rules.families._http_exchanges import HttpRule
from mcpeek.rules.families.http import HttpMethodHeader
from mcpeek.rules.families.http_sessions import HttpSessionTerminated
from tests.rules.test_http import (
    ACCEPT,
    JSON_CT,
    MODERN,
    SSE_CT,
    Wire,
    b64,
    modern_conversation,
)


class _Vouching(HttpMethodHeader):
    """http.method-header, counting its judgments (registered under no id)."""

    id = ""
    head_gated = True
    calls = 0

    def judge(self, ctx, exchange):  # type: ignore[no-untyped-def]
        type(self).calls += 1
        return super().judge(ctx, exchange)


class _NotVouching(_Vouching):
    """The same rule, not vouched for by the check (a subclass must say so itself)."""

    calls = 0


def _lint(records: list[AnyRecord], rules: Any = None, *, gated: bool = True) -> list[Reported]:
    found: list[Reported] = []
    engine = RuleEngine(found.append, rules=rules)
    if not gated:
        for rule in engine.rules:
            rule.ungate()
    analyzer = Analyzer([engine])
    analyzer.feed_all(records)
    analyzer.finish()
    return found


def _keys(found: list[Reported]) -> list[tuple[str, list[int], str]]:
    return [(v.rule, v.msgs, v.message) for v in found]


def test_a_conformant_post_is_not_judged_by_the_rules_the_check_stands_for() -> None:
    w = Wire()
    w.post("tools/call", {"name": "t", "arguments": {}}, id=1, result={"content": []})
    _Vouching.calls = 0
    assert _lint(w.records, [_Vouching]) == []
    assert _Vouching.calls == 0
    assert _lint(w.records, [_Vouching], gated=False) == []
    assert _Vouching.calls == 1  # (the check off: judged, and silent)


def test_a_post_the_check_turns_away_is_judged() -> None:
    w = Wire()
    w.post("tools/call", {"name": "t"}, id=1, drop=("mcp-method",), result={"content": []})
    _Vouching.calls = 0
    (v,) = _lint(w.records, [_Vouching])
    assert _Vouching.calls == 1
    assert "has no Mcp-Method header" in v.message


class _HeadVouching(HttpSessionTerminated):
    """http.session-terminated, counting the heads it judges (registered under no id)."""

    id = ""
    quiet_head = True
    calls = 0

    def on_http_response(self, exchange):  # type: ignore[no-untyped-def]
        type(self).calls += 1
        return super().on_http_response(exchange)


class _HeadNotVouching(_HeadVouching):
    """The same rule, not vouching for the check (a subclass must say so itself)."""

    calls = 0


@pytest.mark.parametrize(
    ("options", "judged"),
    [({}, 0), ({"add": (("mcp-session-id", "s1"),)}, 1), ({"drop": ("mcp-method",)}, 1)],
)
def test_a_head_rule_that_vouches_is_called_only_where_the_check_cannot_stand_for_it(
    options: dict[str, Any], judged: int
) -> None:
    w = Wire()
    w.post("tools/call", {"name": "t", "arguments": {}}, id=1, result={"content": []}, **options)
    _HeadVouching.calls = _HeadNotVouching.calls = 0
    _lint(w.records, [HttpMethodHeader, _HeadVouching, _HeadNotVouching])
    assert _HeadVouching.calls == judged
    assert _HeadNotVouching.calls == 1  # (every head, as before the check)


def test_a_rule_that_does_not_vouch_for_the_check_turns_it_off() -> None:
    w = Wire()
    w.post("tools/call", {"name": "t", "arguments": {}}, id=1, result={"content": []})
    _NotVouching.calls = 0
    assert _lint(w.records, [_NotVouching, HttpMethodHeader]) == []
    assert _NotVouching.calls == 1


def test_the_exchange_is_marked_as_the_rules_would_have_marked_it() -> None:
    # A second client message on the same POST, after the head: the rules that judged
    # the first (here: skipped) do not judge it, the others do (it is their first).
    w = Wire()
    b = w.b
    sent = [ACCEPT, JSON_CT, ("mcp-protocol-version", MODERN), ("mcp-method", "tools/list")]
    b.http("x1", "request", method="POST", path="/mcp", headers=sent)
    b.request("tools/list", None, id=1, ch="x1")
    b.http("x1", "response", status=200, headers=[JSON_CT])
    b.request("prompts/get", {"name": "p"}, id=2, ch="x1")
    b.result(1, {"tools": []}, ch="x1")
    b.http("x1", "end", reason="complete")
    gated = _keys(_lint(w.records))
    assert gated == _keys(_lint(w.records, gated=False))
    rules = {rule for rule, _, _ in gated}
    assert "http.method-header" not in rules  # (its Mcp-Method is the first's)
    assert "http.name-header" in rules  # tools/list has no name: this is its first


def _variants() -> dict[str, Wire]:
    """Exchanges near the conformant case, each one step from it."""
    plain = {"name": "lookup", "arguments": {"q": "x"}}  # (a tool with no x-mcp-header)
    cases: dict[str, dict[str, Any]] = {
        "conformant": {},
        "no accept": {"drop": ("accept",)},
        "one type accepted": {"add": (("accept", "application/json"),), "drop": ("accept",)},
        "method differs": {"add": (("mcp-method", "ping"),), "drop": ("mcp-method",)},
        "name differs": {"add": (("mcp-name", "other"),), "drop": ("mcp-name",)},
        "name encoded": {"add": (("mcp-name", b64("lookup")),), "drop": ("mcp-name",)},
        "no name": {"drop": ("mcp-name",)},
        "no version": {"drop": ("mcp-protocol-version",)},
        "version differs": {"meta": {"io.modelcontextprotocol/protocolVersion": "2025-11-25"}},
        "text body": {"resp_headers": [("content-type", "text/plain")]},
        "no content type": {"resp_headers": []},
        "sse buffered": {"resp_headers": [SSE_CT]},
        "sse": {"resp_headers": [SSE_CT, ("x-accel-buffering", " No ")]},
        "session echoed": {"resp_headers": [JSON_CT, ("mcp-session-id", "s")]},
        "accepted": {"status": 202, "resp_headers": []},
        "error status": {"status": 500, "resp_headers": []},
        "session sent": {"add": (("mcp-session-id", "s1"),)},
        "no _meta version": {"meta": {"io.modelcontextprotocol/protocolVersion": None}},
    }
    wires = {}
    for name, options in cases.items():
        w = modern_conversation()
        for n in (10, 11):  # twice: what a rule remembers of the first counts on the second
            w.post("tools/call", plain, id=n, result={"content": []}, **options)
        wires[name] = w
    annotated = modern_conversation()  # (its Mcp-Param-Region missing: left to the rule)
    call = {"name": "execute_sql", "arguments": {"region": "eu", "query": "q"}}
    annotated.post("tools/call", call, id=10, result={"content": []})
    wires["param missing"] = annotated
    first = Wire()  # (before any Accept was seen)
    first.post("tools/call", plain, id=1, drop=("accept",), result={"content": []})
    wires["no accept, first"] = first
    legacy = Wire(modern=False)
    legacy.post("tools/call", plain, id=1, result={"content": []})
    wires["legacy"] = legacy
    bare = Wire(modern=False)
    bare.version = None
    bare.post("tools/call", plain, id=1, result={"content": []})
    wires["legacy, no version"] = bare
    return wires


@pytest.mark.parametrize("case", list(_variants()))
def test_the_findings_are_those_of_the_rules_called_every_time(case: str) -> None:
    records = _variants()[case].records
    assert _keys(_lint(records)) == _keys(_lint(records, gated=False))


def test_the_variants_do_find_what_they_break() -> None:
    # (the comparison above would pass with every rule silent: they are not)
    found = {
        case: {v.rule for v in _lint(w.records) if v.rule.startswith("http.")}
        for case, w in _variants().items()
    }
    assert found["conformant"] == found["sse"] == found["legacy"] == set()
    assert "http.accept" in found["no accept"] and "http.accept" in found["one type accepted"]
    assert "http.accept" in found["no accept, first"]
    assert "http.method-header" in found["method differs"]
    assert "http.name-header" in found["name differs"] and "http.name-header" in found["no name"]
    assert "http.protocol-version-header" in found["no version"]
    assert "http.protocol-version-header" in found["version differs"]
    assert "http.param-header" in found["param missing"]
    assert (
        "http.content-type" in found["text body"]
        and "http.content-type" in found["no content type"]
    )
    assert "http.sse-buffering" in found["sse buffered"]
    assert "http.session-id" in found["session echoed"]


def test_every_rule_the_check_would_skip_vouches_for_it() -> None:
    # The tracker hears of the HTTP rules only (HttpRule.share): a rule of another kind
    # that asked for the heads clients waited for, and not the others, would be skipped
    # unvouched. None does.
    skipped = [
        cls
        for cls in catalog().values()
        if cls.record_phases is not None
        and "late-response" in cls.record_phases
        and "response" not in cls.record_phases
    ]
    assert skipped
    assert all(issubclass(cls, HttpRule) and cls.head_gated for cls in skipped)
    # and on a head it proves the head rules silent on too (quiet-response)
    heads = {"response", "late-response"}
    skipped = [
        cls
        for cls in catalog().values()
        if cls.record_phases is not None
        and heads & cls.record_phases
        and "quiet-response" not in cls.record_phases
    ]
    assert {cls.id for cls in skipped if getattr(cls, "quiet_head", False)} == {
        "http.get-stream",
        "http.session-missing",
        "http.session-terminated",
    }
    assert all(issubclass(cls, HttpRule) and (cls.head_gated or cls.quiet_head) for cls in skipped)
