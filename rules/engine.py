"""The rule engine: every registered rule, run over the Analyzer's events.

:class:`RuleEngine` (an :class:`~mcpeek.inspector.analysis.AnalysisListener`) instantiates each
rule once, calls the hooks a rule overrides only on what it asked for (:mod:`~mcpeek.rules.dispatch`
by the facts of :mod:`~mcpeek.rules.facts`), gates era rules on the conversation's era (or
``--spec``'s), and hands every violation, a :class:`~mcpeek.rules.reported.Reported`, to
``report`` (``shown=False``: without the blamed message's excerpt, method and id, which
lint's JSON prints not). A rule that raises is an ``inspector.rule-crashed`` violation.

The conformant fast path: a rule whose ``gated`` kinds include a message's kind is silent
on every message the :class:`~mcpeek.rules.gate.Gate` accepts (one typed decode of the whole
message), so on those it is not called at all; a message left with no rule to call costs
no :class:`~mcpeek.rules.context.MessageContext` either. A
:class:`~mcpeek.rules.verify.VerifiedRuleEngine` runs a twin without the gate beside this
one and reports any hook whose findings differ as ``inspector.gate-unsound``: every rule
test (:func:`mcpeek.rules.testing.lint_records`) doubles as a test of the gate.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from mcpeek.inspector.analysis import AnalysisListener, Conversation, Entry, Flow
from mcpeek.inspector.jsonrpc import MessageDecoder
from mcpeek.inspector.records import Act, Msg, Record
from mcpeek.rules.acted import ActedMessages
from mcpeek.rules.base import Finding, Follower, LateFinding, Rule, catalog, listed_era
from mcpeek.rules.context import PARAMS_BIT, RESPONSE_KINDS, MessageContext, RequestMemo, is_batch
from mcpeek.rules.dispatch import ANY_ERA, Dispatch, overrides
from mcpeek.rules.facts import shown
from mcpeek.rules.gate import Gate, plain_answer
from mcpeek.rules.held import ServerEraHold
from mcpeek.rules.reported import (
    GATE_UNSOUND,
    RULE_CRASHED,
    Reported,
    blamed,
    crash_report,
    flag_line,
    made_note,
    offended,
    version_era,
)
from mcpeek.rules.spec_links import SpecLinks

# The report shape lives in mcpeek.rules.reported; importers of the engine get it here too.
__all__ = ["GATE_UNSOUND", "RULE_CRASHED", "Reported", "RuleEngine", "flag_line", "version_era"]


class RuleEngine(AnalysisListener):
    def __init__(
        self,
        report: Callable[[Reported], None],
        *,
        spec: str | None = None,
        ignore: Iterable[str] = (),
        rules: Iterable[type[Rule]] | None = None,
        gate: bool = True,
        shown: bool = True,
    ) -> None:
        self.report = report
        self._shown = shown  # reports carry the excerpt, method and id (lint's JSON: no)
        self.spec = spec
        self._forced_era = version_era(spec)
        ignored = set(ignore)
        chosen = rules if rules is not None else catalog().values()
        self.rules = [cls() for cls in chosen if cls.id not in ignored]
        shared: dict[type, Any] = {}  # what the rules follow once for all (Rule.share)
        for rule in self.rules:
            rule.share(shared)
        followers = tuple(f for f in shared.values() if isinstance(f, Follower))
        self._decoder = MessageDecoder()
        # gate off: every rule on every message (what the verifying twin compares with)
        self._index = Dispatch(self.rules, gate=Gate() if gate else None, followers=followers)
        self._current_flow: Flow | None = None  # the flow of the hook being run
        self._requests = RequestMemo()
        self.gate_accepted = 0  # messages the gate accepted (for the benchmark's figures)
        self._held = ServerEraHold()
        self._record: Record | None = None  # the record of the on_record hook being run
        self._acted = ActedMessages()  # what mcpeek made or acted on (--fault, -s)
        self._proxy_rules = [r for r in self.rules if overrides(r, "on_proxy_answered")]
        self._resting = True  # every rule that may be idle is (Rule.idle_kinds)
        self._links = SpecLinks()

    def _rest(self) -> None:
        """After a hook of a rule that may be idle: whether every such rule now is."""
        for rule in self._index.sleepers:  # (a loop: no generator built per message)
            if not rule.idle():
                self._resting = False
                return
        self._resting = True

    # -- hooks from the Analyzer -------------------------------------------------------
    def on_message(self, entry: Entry, flow: Flow, conversation: Conversation) -> None:
        declared = conversation.declared  # (what the era properties read, without their calls)
        era = self._forced_era or declared.era
        method = entry.method if entry.method is not None else flow.method
        version = self.spec or declared.protocol_version
        transport = conversation.transport  # (followers: never on stdio, which pays nothing)
        key = (entry.kind, method, era, transport, entry.dir, version)
        dispatch = self._index.message.get(key) or self._index.message_rules(key)
        if dispatch.variants is not None:  # a rule needs a fact of it (rules.facts)
            facts = shown(dispatch.asked, entry, flow, conversation, self._requests)
            dispatch = dispatch.variants[facts]
        if self._held.held:
            self._held.release(conversation, self.report)
        rules = dispatch.every
        if not rules and (transport == "stdio" or not dispatch.followers):
            return
        resting = dispatch.resting if self._resting else None
        if resting is not None:
            rules = resting.every  # (every rule that may be idle is: those are not called)
        self._current_flow = flow
        ctx: MessageContext | None = None  # (built for rules to call: most messages have none)
        keeping: tuple[Follower, ...] = ()  # followers keeping it for later (so do their readers)
        context = (entry, flow, conversation, self._decoder, era, version, self._requests)
        if transport != "stdio":
            ctx = MessageContext(*context)
            try:  # (the rules' shared state: its bug is theirs, reported, never raised)
                for follower in dispatch.followers:
                    if follower.on_message(ctx):
                        keeping = (*keeping, follower)
            except Exception as exc:
                self._crashed(type(follower).__name__, exc, conversation, entry.seq)
        responds = entry.kind in RESPONSE_KINDS
        gate, conformant = dispatch.gate, False
        if gate is not None and gate(entry.record.raw) and (not responds or plain_answer(flow)):
            conformant = True
            self.gate_accepted += 1
            if entry.kind == "request" and era is not None:  # (always: the gate needs it)
                self._requests.accepted(entry.seq, era)
            rules = dispatch.ungated if resting is None else resting.ungated
        elif (
            dispatch.envelope is not None
            and dispatch.envelope(entry.record.raw)
            and (not responds or plain_answer(flow))
        ):  # turned away, but its envelope is sound: the envelope's rules have nothing to say
            rules = dispatch.enveloped if resting is None else resting.enveloped  # type: ignore[assignment]
        if keeping:
            rules = dispatch.without_readers(rules, keeping)
        if rules:
            if ctx is None:
                ctx = MessageContext(*context)
            ctx.conformant = conformant
            for rule, hook in rules:  # (the hot path: no per-rule helper call)
                try:
                    findings = hook(ctx)
                    if findings:
                        entries = [entry]
                        for finding in findings:
                            self._emit(rule, finding, conversation, entries)
                except Exception as exc:  # a rule bug must not stop the others, nor the traffic
                    self._crashed(rule.id, exc, conversation, entry.seq)
            if entry.kind == "request" and ctx.computed & PARAMS_BIT:  # a rule decoded them
                self._requests.note(ctx)
        if dispatch.wakes if resting is None else resting.wakes:
            self._rest()

    def on_flow_end(self, flow: Flow, conversation: Conversation) -> None:
        declared = conversation.declared  # (the era properties' values, without their calls)
        era = self._forced_era or declared.era
        version = self.spec or declared.protocol_version
        key = (era, version, flow.status, flow.method)
        rules = self._index.flow_end.get(key)
        if rules is None:
            rules = self._index.flow_end_rules(key)
        if not rules:
            return
        self._current_flow = flow
        entries = flow.entries  # built once for all the rules
        last = entries[-1].seq if entries else 0
        for rule in rules:
            self._run(
                rule, rule.on_flow_end, (flow, conversation), conversation, entries, fallback=last
            )

    def on_record(self, record: Record, conversation: Conversation | None) -> None:
        kind = type(record)
        if kind is Act or (kind is Msg and record.made is not None):  # type: ignore[attr-defined]
            self._acted.note(record)
        on_stdio = isinstance(record, Msg) and record.ch == "stdio"
        # A record with no conversation yet (an HTTP exchange before its session is
        # known) goes to every rule: only the rule can tell what applies to it.
        era = ANY_ERA if conversation is None else self._forced_era or conversation.declared.era
        key = (kind, on_stdio, era)
        found = self._index.record.get(key)
        if found is None:
            found = self._index.record_rules(key)
        wanting = found.plain
        if not on_stdio and found.followers:  # (HTTP: the shared state, then the rules)
            phase = None  # an http record's phase, as a follower may refine it
            try:
                for follower in found.followers:
                    phase = follower.on_record(record) or phase
            except Exception as exc:
                seq = getattr(record, "seq", 0)
                self._crashed(type(follower).__name__, exc, conversation, seq)
            if found.phases is not None:
                wanting = found.phases.get(phase or record.phase, wanting)  # type: ignore[attr-defined]
        # (only asked when some rule wants batches alone: the floor pays nothing for it;
        # text that opens with "{" is no batch, known without the call)
        if found.batches is not None and kind is Msg:
            raw = record.raw  # type: ignore[attr-defined]
            if (raw is None or raw[:1] != "{") and is_batch(record):  # type: ignore[arg-type]
                wanting = found.batches
        if not wanting:
            return
        seq = getattr(record, "seq", 0)
        self._record = record
        # Through _run, as before: a hook's stack depth is part of what it finds (an id
        # nested near the interpreter's recursion limit is shown or not by it).
        for rule in wanting:
            self._run(rule, rule.on_record, (record, conversation), conversation, [], fallback=seq)
        self._record = None

    def on_conversation_end(self, conversation: Conversation) -> None:
        era = self._forced_era or conversation.era
        rules = self._index.conversation_end.get(era)
        if rules is None:
            rules = self._index.conversation_end_rules(era)
        for rule in rules:
            self._run(rule, rule.on_conversation_end, (conversation,), conversation, [], fallback=0)
        self._held.drop(conversation)  # the server never showed it is modern
        self._rest()

    def on_proxy_answered(self, exchange: str) -> None:
        for rule in self._proxy_rules:
            self._run(rule, rule.on_proxy_answered, (exchange,), None, [], fallback=0)

    # -- running one hook -------------------------------------------------------------
    def _run(
        self,
        rule: Rule,
        hook: Callable[..., Any],
        args: tuple[Any, ...],
        conversation: Conversation | None,
        entries: list[Entry],
        *,
        fallback: int,
    ) -> None:
        try:
            findings = hook(*args)
            if findings is None:
                return
            for finding in findings:
                if type(finding) is LateFinding:
                    self._emit_late(rule, finding)
                else:
                    self._emit(rule, finding, conversation, entries)
        except Exception as exc:  # a rule bug must not stop the others, nor the traffic
            self._crashed(rule.id, exc, conversation, fallback)

    def _emit_late(self, rule: Rule, late: LateFinding) -> None:
        """A finding on a message judged after its own hook: reported as if then."""
        about = late.about
        current, self._current_flow = self._current_flow, about.flow
        plain = Finding(msgs=late.msgs, message=late.message, severity=late.severity)
        self._emit(rule, plain, about.conversation, [about.entry])
        self._current_flow = current

    def _crashed(self, who: str, exc: Exception, conv: Conversation | None, seq: int) -> None:
        self.report(crash_report(who, exc, conv.key if conv is not None else "", seq))

    def _emit(
        self, rule: Rule, finding: Finding, conversation: Conversation | None, entries: list[Entry]
    ) -> None:
        msgs = finding.msgs
        current = self._current_flow
        version = self.spec
        if version is None and conversation is not None:
            version = conversation.declared.protocol_version
        direction, offender = blamed(msgs, entries, self._record)
        shown, method, msg_id = offended(offender if self._shown else None, current)
        made = self._acted.made(msgs[-1], offender) if msgs and self._acted.any else None
        reported = Reported(
            rule=rule.id,
            severity=finding.severity or rule.severity,
            msgs=msgs,
            message=finding.message if made is None else f"{finding.message} {made_note(made)}",
            spec=self._links(rule.spec, version),
            era=conversation.declared.era if conversation is not None else None,
            method=method,
            msg_id=msg_id,
            excerpt=shown,
            conversation=conversation.key if conversation is not None else "",
            made=made,
        )
        if (
            direction == "s2c"
            and self._forced_era is None
            and conversation is not None
            and conversation.declared.server_modern is None  # (ServerEraHold.waits)
            and listed_era(type(rule)) == "modern"
        ):
            self._held.hold(conversation, reported)
            return
        if conversation is not None and self._held.held:
            self._held.release(conversation, self.report)
        self.report(reported)
