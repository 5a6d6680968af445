"""The engine calls a hook only on what its rule declared it wants (mcpeek.rules.dispatch)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from mcpeek.inspector.analysis import Analyzer, Conversation, Flow
from mcpeek.inspector.records import Msg, Record
from mcpeek.inspector.testing.records import RecordBuilder
from mcpeek.rules.base import Findings, Rule
from mcpeek.rules.context import MessageContext
from mcpeek.rules.engine import RuleEngine
from tests.rules.test_results import ask, discovered


def test_kind_methods_flow_filters_and_batch_records_spare_the_calls() -> None:
    calls: list[tuple[str, object, object]] = []

    class Probe(Rule):  # not registered: no id
        kinds = frozenset({"notification", "result"})
        kind_methods: ClassVar[Mapping[str, frozenset[str]]] = {
            "notification": frozenset({"notifications/progress"})  # results: every method
        }
        flow_statuses = frozenset({"cancelled", "unanswered"})
        flow_methods = frozenset({"ping"})
        record_types = frozenset({Msg})
        batch_records = True

        def on_message(self, ctx: MessageContext) -> Findings:
            calls.append(("message", ctx.kind, ctx.method))
            return None

        def on_flow_end(self, flow: Flow, conversation: Conversation) -> Findings:
            calls.append(("flow_end", flow.method, flow.status))
            return None

        def on_record(self, record: Record, conversation: Conversation | None) -> Findings:
            assert isinstance(record, Msg)
            calls.append(("record", record.raw, None))
            return None

    b = RecordBuilder()
    b.request("tools/call", {"name": "a", "_meta": {"progressToken": "t"}}, id=1)
    b.notify("notifications/progress", {"progressToken": "t", "progress": 1}, dir="s2c")
    b.notify("notifications/message", {"level": "info", "data": "x"}, dir="s2c")
    b.result(1, {"content": []})
    b.request("ping", id=2)
    b.notify("notifications/cancelled", {"requestId": 2}, dir="c2s")
    b.request("tools/list", id=3)
    b.raw("[]")
    b.request("ping", id=4)  # never answered
    analyzer = Analyzer([RuleEngine(lambda v: None, rules=[Probe])])
    analyzer.feed_all(b.records)
    analyzer.finish()
    assert calls == [
        ("message", "notification", "notifications/progress"),
        ("message", "result", "tools/call"),  # not the log message, nor the cancellation
        ("flow_end", "ping", "cancelled"),  # not the answered tools/call, nor tools/list
        ("record", "[]", None),  # the batch only
        ("flow_end", "ping", "unanswered"),
    ]


def test_a_rule_is_left_out_of_the_messages_it_is_idle_on_while_it_says_it_is() -> None:
    calls: list[tuple[str, int]] = []

    class Holder(Rule):  # not registered: holds a request's seq until the next result
        kinds = frozenset({"request", "result"})
        idle_kinds = frozenset({"result"})

        def __init__(self) -> None:
            self.held: list[int] = []

        def idle(self) -> bool:
            return not self.held

        def on_message(self, ctx: MessageContext) -> Findings:
            calls.append((ctx.kind, ctx.seq))
            if ctx.kind == "request" and ctx.method == "tools/call":
                self.held.append(ctx.seq)
            elif ctx.kind == "result":
                self.held.clear()
            return None

    b = RecordBuilder()
    b.request("ping", id=1)
    b.result(1, {})  # nothing held: not called
    b.request("tools/call", {"name": "a"}, id=2)
    b.result(2, {"content": []})  # something held: called, and it lets go
    b.request("ping", id=3)
    b.result(3, {})  # idle again: not called
    analyzer = Analyzer([RuleEngine(lambda v: None, rules=[Holder])])
    analyzer.feed_all(b.records)
    analyzer.finish()
    seqs = [r.seq for r in b.records if isinstance(r, Msg)]
    assert calls == [
        ("request", seqs[0]),
        ("request", seqs[2]),
        ("result", seqs[3]),
        ("request", seqs[4]),
    ]


def test_a_rule_that_needs_a_retry_is_called_on_the_retry_only() -> None:
    calls: list[int] = []

    class Retried(Rule):  # not registered: no id
        kinds = frozenset({"request"})
        flow_needs = frozenset({"retry"})

        def on_message(self, ctx: MessageContext) -> Findings:
            calls.append(ctx.seq)
            return None

    b = discovered()
    b.request("tools/call", {"name": "a"}, id=7)
    ask(b, 7, state="s1")
    b.request("tools/call", {"name": "a", "requestState": "s1"}, id=8)
    retry = b.last.seq
    b.request("tools/call", {"name": "b"}, id=9)  # a first attempt again
    analyzer = Analyzer([RuleEngine(lambda v: None, rules=[Retried])])
    analyzer.feed_all(b.records)
    analyzer.finish()
    assert calls == [retry]


Needs = Callable[[str, Any, Any, str], set[str]]  # (kind, method, era, direction)


def needing(needs: Needs, kinds: set[str], calls: list[int], **more: Any) -> type[Rule]:
    """A rule (not registered: no id) of these ``kinds`` that needs the facts ``needs``
    says (by kind, method, era and direction) and notes each message it is called on."""

    class Needing(Rule):
        @classmethod
        def facts_needed(
            cls, kind: str, method: str | None, era: str | None, direction: str
        ) -> frozenset[str]:
            return frozenset(needs(kind, method, era, direction))

        def on_message(self, ctx: MessageContext) -> Findings:
            calls.append(ctx.seq)
            return None

    Needing.kinds = frozenset(kinds)
    for name, value in more.items():  # (methods…)
        setattr(Needing, name, value)
    return Needing


def called(records: list[Record], *rules: type[Rule], gate: bool = True) -> None:
    analyzer = Analyzer([RuleEngine(lambda v: None, rules=list(rules), gate=gate)])
    analyzer.feed_all(records)
    analyzer.finish()


def test_a_rule_that_needs_facts_of_a_request_is_called_where_correlation_noted_them() -> None:
    calls: list[int] = []
    noted = needing(
        lambda kind, method, era, direction: (
            {"id_in_flight", "log_level"} if direction == "c2s" else set()
        ),
        {"request"},
        calls,
    )
    level = {"io.modelcontextprotocol/logLevel": "info"}
    b = discovered()
    b.request("tools/call", {"name": "a"}, id=1, meta=level)  # a level, no reuse
    b.request("tools/call", {"name": "a"}, id=1)  # reused, no level
    b.request("tools/call", {"name": "a"}, id=1, meta=level)  # both
    both = b.last.seq
    b.request("ping", id=2, dir="s2c")  # the server's: no need stated there
    called(b.records, noted)
    assert calls == [both, b.last.seq]


def test_a_rule_that_needs_facts_of_the_flows_attempts_is_called_where_they_show() -> None:
    calls: list[int] = []
    progressing = needing(
        lambda kind, method, era, direction: {"progress" if kind == "result" else "answered"},
        {"notification", "result"},
        calls,
    )
    b = discovered()
    b.request("tools/call", {"name": "a"}, id=1)
    b.result(1, {"content": []})  # no progress asked for
    b.request("tools/call", {"name": "a"}, id=2, meta={"progressToken": 9})
    b.notify("notifications/progress", {"progressToken": 9, "progress": 1})  # unanswered
    b.result(2, {"content": []})
    asked = b.last.seq
    b.notify("notifications/progress", {"progressToken": 9, "progress": 2})
    called(b.records, progressing)
    assert calls == [asked, b.last.seq]


def test_every_rule_needs_only_facts_the_engine_knows() -> None:
    # (an unknown name would raise while a dispatch row is built, in the middle of lint)
    from mcpeek.rules import catalog
    from mcpeek.rules.facts import FACTS

    kinds = ("request", "notification", "result", "error")
    for cls in catalog().values():
        for kind in kinds:
            for era in ("modern", "legacy", None):
                for direction in ("c2s", "s2c"):
                    assert cls.facts_needed(kind, None, era, direction) <= set(FACTS), cls.id


def test_a_rule_that_needs_a_rejected_probe_is_called_once_there_is_one() -> None:
    calls: list[int] = []
    probed = needing(
        lambda kind, method, era, direction: (
            set() if method == "server/discover" else {"probe_rejected"}
        ),
        {"result", "error"},
        calls,
    )
    b = RecordBuilder(modern=True)
    b.request("tools/call", {"name": "a"}, id=1)
    b.result(1, {"content": []})
    b.request("server/discover", id=3)
    b.error(3, -32601, "Method not found")
    probe = b.last.seq
    b.request("tools/list", id=4)
    b.result(4, {"tools": []})
    called(b.records, probed)
    assert calls == [probe, b.last.seq]


def test_the_twin_without_the_gate_reads_no_facts() -> None:
    # (so that the verifying engine would see a rule a fact skipped wrongly)
    calls: list[int] = []
    probed = needing(lambda kind, method, era, direction: {"probe_rejected"}, {"result"}, calls)
    b = RecordBuilder(modern=True)
    b.request("tools/call", {"name": "a"}, id=1)
    b.result(1, {"content": []})
    called(b.records, probed, gate=False)
    assert calls == [b.last.seq]


def test_rules_that_need_declared_capabilities_tools_or_an_unproven_request() -> None:
    calls: dict[str, list[int]] = {name: [] for name in ("caps", "input", "output", "unproven")}
    call = frozenset({"tools/call"})
    rules = [
        needing(lambda *_: {"server_capabilities"}, {"request"}, calls["caps"], methods=call),
        needing(lambda *_: {"input_schema"}, {"request"}, calls["input"], methods=call),
        needing(lambda *_: {"output_schema"}, {"result"}, calls["output"], methods=call),
        needing(lambda *_: {"request_unproven"}, {"result"}, calls["unproven"], methods=call),
    ]
    b = RecordBuilder(modern=True)
    b.request("tools/call", {"name": "t"}, id=1)  # nothing declared yet
    b.raw('{"jsonrpc":"2.0","id":1,"result":{"content":[]}}')  # answers a proven request
    b.request("server/discover", id=2)
    b.result(2, {"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}}})
    b.request("tools/list", id=3)
    schema = {"type": "object"}
    b.result(3, {"tools": [{"name": "t", "inputSchema": schema, "outputSchema": schema}]})
    b.raw('{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"t"}}')  # no _meta
    request = b.last.seq
    b.result(4, {"content": [], "structuredContent": {}})
    answer = b.last.seq
    called(b.records, *rules)
    assert calls == {
        "caps": [request],
        "input": [request],
        "output": [answer],
        "unproven": [answer],
    }
