"""Checking the conformance gate as it runs: a second engine without it, findings compared.

The gate (:mod:`mcpeek.rules.gate`) lets the engine skip rules and lets some rules
take a message's conformance as read; either would hide a finding if the gate
accepted too much, or if a skipped rule kept state. :class:`VerifiedRuleEngine`
is built explicitly where that check is wanted (the rule tests, through
:func:`mcpeek.rules.testing.lint_records`, and the tests of the gate): it feeds
every hook to itself and to a twin engine that has the gate off, and when the
findings of one hook differ between the two it reports them as an
``inspector.gate-unsound`` violation, besides the findings themselves.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from mcpeek.inspector.analysis import Conversation, Entry, Flow
from mcpeek.inspector.records import Record
from mcpeek.rules.base import Rule
from mcpeek.rules.engine import GATE_UNSOUND, Reported, RuleEngine

Key = tuple[str, tuple[int, ...], str]


class VerifiedRuleEngine(RuleEngine):
    def __init__(
        self,
        report: Callable[[Reported], None],
        *,
        rules: Iterable[type[Rule]] | None = None,
        **options: Any,  # spec, ignore, gate: as RuleEngine takes them
    ) -> None:
        chosen = list(rules) if rules is not None else None
        self._passed_on = report
        self._with_gate: list[Reported] = []
        self._without_gate: list[Reported] = []
        super().__init__(self._found, rules=chosen, **options)
        options["gate"] = False
        self._twin = RuleEngine(self._without_gate.append, rules=chosen, **options)
        for rule in self._twin.rules:  # (the rules' own checks too: the HTTP header rules')
            rule.ungate()

    def _found(self, violation: Reported) -> None:
        self._with_gate.append(violation)
        self._passed_on(violation)

    # -- every hook twice -----------------------------------------------------------------
    def on_message(self, entry: Entry, flow: Flow, conversation: Conversation) -> None:
        self._twin.on_message(entry, flow, conversation)
        super().on_message(entry, flow, conversation)
        self._compare(f"message seq {entry.seq}", conversation)

    def on_flow_end(self, flow: Flow, conversation: Conversation) -> None:
        self._twin.on_flow_end(flow, conversation)
        super().on_flow_end(flow, conversation)
        self._compare(f"the end of flow {flow.number}", conversation)

    def on_record(self, record: Record, conversation: Conversation | None) -> None:
        self._twin.on_record(record, conversation)
        super().on_record(record, conversation)
        self._compare(f"record seq {getattr(record, 'seq', 0)}", conversation)

    def on_conversation_end(self, conversation: Conversation) -> None:
        self._twin.on_conversation_end(conversation)
        super().on_conversation_end(conversation)
        self._compare("the end of the conversation", conversation)

    def on_proxy_answered(self, exchange: str) -> None:
        self._twin.on_proxy_answered(exchange)
        super().on_proxy_answered(exchange)
        self._compare(f"mcpeek's answer to exchange {exchange}", None)

    def _compare(self, where: str, conversation: Conversation | None) -> None:
        got = [_key(v) for v in self._with_gate]
        expected = [_key(v) for v in self._without_gate]
        self._with_gate.clear()
        self._without_gate.clear()
        if got == expected:
            return
        msgs = sorted({seq for _, seq_list, _ in got + expected for seq in seq_list})
        self._passed_on(
            Reported(
                rule=GATE_UNSOUND,
                severity="error",
                msgs=msgs,
                message=f"at {where}, with the conformance gate the rules found {got}; "
                f"without it {expected}",
                spec="",
                conversation=conversation.key if conversation is not None else "",
            )
        )


def _key(violation: Reported) -> Key:
    return (violation.rule, tuple(violation.msgs), violation.message)
