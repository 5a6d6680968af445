"""The engine: a rule that raises becomes inspector.rule-crashed; the others go on."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

import msgspec

from mcpeek.inspector.analysis import Analyzer
from mcpeek.inspector.testing.records import RecordBuilder
from mcpeek.rules.base import Finding, Findings, Rule
from mcpeek.rules.context import MessageContext
from mcpeek.rules.engine import RULE_CRASHED, Reported, RuleEngine
from mcpeek.rules.testing import lint_records


def test_a_crashing_rule_is_reported_and_the_others_still_run() -> None:
    class Boom(Rule):  # not registered: no id
        def on_message(self, ctx: MessageContext) -> Findings:
            raise ValueError("boom")

    class Counts(Rule):
        def on_message(self, ctx: MessageContext) -> Findings:
            return [Finding(msgs=[ctx.seq], message="seen")]

    Boom.id = Counts.id = ""  # keep them out of the catalog
    b = RecordBuilder()
    b.request("ping", id=1)
    b.result(1)
    found = lint_records(b.records, rules=[Boom, Counts])
    crashed = [v for v in found if v.rule == RULE_CRASHED]
    assert [v.msgs for v in crashed] == [[1], [2]]
    assert "raised ValueError: boom" in crashed[0].message
    assert [v.message for v in found if v.message == "seen"] == ["seen", "seen"]


def test_dispatch_by_kind_and_direction_and_shared_lazy_decodes() -> None:
    seen: list[tuple[str, str, object]] = []

    class ServerResults(Rule):
        kinds = frozenset({"request", "result"})
        directions: ClassVar[Mapping[str, str]] = {"result": "s2c"}  # requests: both sides

        def on_message(self, ctx: MessageContext) -> Findings:
            seen.append((ctx.kind, ctx.entry.dir, ctx.request_params))
            assert ctx.params is ctx.params  # decoded once, shared
            return None

    b = RecordBuilder()
    b.request("tools/call", {"name": "a"}, id=1)
    b.result(1, {"content": []})
    b.request("roots/list", id=2, dir="s2c")
    b.result(2, {"roots": []}, dir="c2s")
    # A plain engine: a VerifiedRuleEngine's twin would call it twice.
    analyzer = Analyzer([RuleEngine(lambda v: None, rules=[ServerResults])])
    analyzer.feed_all(b.records)
    analyzer.finish()
    assert seen == [
        ("request", "c2s", None),
        ("result", "s2c", {"name": "a"}),
        ("request", "s2c", None),
    ]


def test_a_finding_becomes_the_captures_violation_record_without_its_context() -> None:
    import msgspec

    from mcpeek.inspector.records import AnyRecord, Violation

    b = RecordBuilder()
    b.raw('{"jsonrpc":"1.0","id":7,"method":"ping"}')
    found: list[Reported] = []
    analyzer = Analyzer([RuleEngine(found.append)])
    for record in b.records:  # the header first
        analyzer.feed(record)
    analyzer.finish()
    reported = next(v for v in found if v.rule == "jsonrpc.version")
    assert (reported.method, reported.msg_id) == ("ping", 7)
    record = reported.record()
    assert record == Violation(
        rule=reported.rule,
        severity=reported.severity,
        msgs=reported.msgs,
        message=reported.message,
        spec=reported.spec,
    )
    line = msgspec.json.decode(msgspec.json.encode(record))
    assert set(line) == {"k", "rule", "severity", "msgs", "message", "spec"}  # the format's
    assert msgspec.json.decode(msgspec.json.encode(record), type=AnyRecord) == record


def test_shown_false_leaves_out_only_what_a_reader_sees_of_the_blamed_message() -> None:
    # lint's JSON builds its engine so: the findings are the same ones, without the
    # excerpt, method and id of the message each blames (which it never prints).
    b = RecordBuilder()
    b.request("tools/list", id="a")
    b.request("tools/list", id="a")  # id.reused, on the second request
    b.error(7, -32600, "no such request")  # an orphan answer
    found: dict[bool, list[Reported]] = {}
    for shown in (True, False):
        found[shown] = []
        analyzer = Analyzer([RuleEngine(found[shown].append, shown=shown)])
        analyzer.feed_all(b.records)
        analyzer.finish()
    assert any(v.excerpt and v.method and v.msg_id is not None for v in found[True])
    bare = [msgspec.structs.replace(v, excerpt="", method=None, msg_id=None) for v in found[True]]
    assert found[False] == bare
