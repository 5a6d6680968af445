"""The decision core: one complete message in, one :class:`Outcome` out (sans-IO).

The actor follows the conversation with its own
:class:`~mcpeek.inspector.analysis.Analyzer` (so that a filter sees a
response's method, and a script its flow), then asks the scripts, in order,
and then the fault rules, in order; the first that acts decides. A message
nobody acts on passes with its bytes untouched.

``random`` is seeded (``--seed``) so that a run with ``p=`` acts on the same
messages every time it sees the same traffic.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from typing import Any

from mcpeek.inspector.act.faults import Action, FaultRule
from mcpeek.inspector.act.hold import HoldError, Holds
from mcpeek.inspector.act.inject import Injector
from mcpeek.inspector.act.scripts import Script
from mcpeek.inspector.act.verdicts import RESPONSE_KINDS, Drop, Edit, Message, Outcome, as_bytes
from mcpeek.inspector.act.wire import corrupt, error_answer, member_answer
from mcpeek.inspector.analysis import AnalysisListener, Analyzer, Conversation, Entry, Flow
from mcpeek.inspector.filters import Filter, FilterError, compile_filter
from mcpeek.inspector.records import Act, Direction, Header, Msg, text_fields
from mcpeek.inspector.views.session import FlowItem


class MessageItem(FlowItem):
    """A flow as a filter sees it while one of its messages is acted on:
    ``~k`` is the kind of that message, not of the flow's first."""

    __slots__ = ("_kind",)

    def __init__(self, flow: Flow, kind: str) -> None:
        super().__init__(flow)
        self._kind = kind

    @property
    def message_kind(self) -> str:
        return self._kind


class _Last(AnalysisListener):
    """Keeps the entry and flow of the message just fed."""

    def __init__(self) -> None:
        self.entry: Entry | None = None
        self.flow: Flow | None = None

    def on_message(self, entry: Entry, flow: Flow, conversation: Conversation) -> None:
        self.entry, self.flow = entry, flow

    def take(self) -> tuple[Entry | None, Flow | None]:
        """The message just fed (``None``: it was no message) and its flow; forgotten."""
        entry, flow = self.entry, self.flow
        self.entry = self.flow = None
        return entry, flow


class Actor:
    """Decides, message by message, what the relay does; ``report`` tells the user
    about a script that failed (once per script)."""

    def __init__(
        self,
        faults: Sequence[FaultRule] = (),
        scripts: Sequence[Script] = (),
        *,
        seed: int | None = None,
        report: Callable[[str], None] = lambda text: None,
        intercepts: Sequence[Filter] = (),
        holds: Holds | None = None,
    ) -> None:
        self.intercepts = list(intercepts)
        self.holds = holds if holds is not None else Holds()
        self.injector = Injector()
        self.controlled = False  # a control channel serves holds and injection
        self.faults = list(faults)
        self.scripts = list(scripts)
        self.random = random.Random(seed)
        self.report = report
        self._last = _Last()
        # keep_flows: a flow's bytes stay while its message is judged (``~b``); the list
        # of flows is emptied after each message, so that finished flows are let go.
        self._analyzer = Analyzer([self._last], keep_flows=True)
        self._analyzer.feed(Header(transport="stdio"))  # one conversation: ids as the peers see
        self._seq = 0

    def follow(self, direction: Direction, raw: bytes) -> tuple[Message, Flow | None]:
        """Feed the message to the actor's analysis: its view and its flow so far."""
        self._seq += 1
        text, text_b64 = text_fields(raw)
        record = Msg(seq=self._seq, t=time.time(), dir=direction, ch="stdio")
        record.raw, record.raw_b64 = text, text_b64
        self._analyzer.feed(record)
        if self._analyzer.flows:
            self._analyzer.flows.clear()
        entry, flow = self._last.take()
        if entry is None:
            return Message(direction, "stdio", raw, "invalid", None, None), flow
        method = entry.method if entry.method is not None else (flow.method if flow else None)
        return Message(direction, "stdio", raw, entry.kind, entry.id, method), flow

    async def decide(self, direction: Direction, ch: str, raw: bytes) -> Outcome:
        message, flow = self.follow(direction, raw)
        message.ch = ch
        if self.injector.pending and self.injector.consumes(direction, message.kind, message.id):
            return _consumed(message)
        if flow is not None and self.intercepts:
            item = MessageItem(flow, "response" if message.kind in RESPONSE_KINDS else message.kind)
            caught = next((f for f in self.intercepts if f(item)), None)
            if caught is not None:
                return await self._hold(message, str(caught))
        for script in self.scripts:
            verdict = await script.call(message, flow, self.report)
            if verdict is not None:
                outcome = self._verdict(message, verdict)
                if outcome is not None:
                    outcome.act = _act(outcome, message, "script", str(script.path))
                    return outcome
        if flow is not None and self.faults:
            kind = "response" if message.kind in RESPONSE_KINDS else message.kind
            item = MessageItem(flow, kind)
            for rule in self.faults:
                if rule.spent or not rule.filter(item):
                    continue
                outcome = self._fault(message, rule.action)
                if outcome is None:  # not for this kind of message (an error for a notification)
                    continue
                if rule.probability is not None and self.random.random() >= rule.probability:
                    continue
                rule.fired += 1
                outcome.act = _act(outcome, message, "fault", rule.text)
                return outcome
        return Outcome(raw)

    def set_intercept(self, text: str) -> None:
        """Hold what ``text`` matches from now on (``""``: nothing); a bad filter
        raises :class:`~mcpeek.inspector.act.hold.HoldError` and changes nothing."""
        if not text.strip():
            self.intercepts = []
            return
        try:
            self.intercepts = [compile_filter(text)]
        except FilterError as exc:
            raise HoldError(f"bad filter: {exc}") from None

    async def _hold(self, message: Message, caught: str) -> Outcome:
        """Hold ``message`` until released (``--intercept``); what was done is an act."""
        held = self.holds.hold(message.dir, message.ch, message.raw, message.kind, message.method)
        what = f"{'→' if message.dir == 'c2s' else '←'} {message.method or message.kind}"
        self.report(f"holding #{held.number} {what} ({len(self.holds)} held)")
        try:
            release = await held.future
        finally:
            self.holds.done(held)
        if release.action == "forward":
            outcome = Outcome(message.raw)
        elif release.action == "edit":
            outcome = Outcome(release.data, made="edit")
        elif release.action == "drop":
            outcome = Outcome(None)
        else:
            outcome = Outcome(None, answer=release.data)
        outcome.act = _act(outcome, message, "intercept", caught)
        if release.action == "forward":
            outcome.act.action = "hold"
        outcome.act.ms = round((time.monotonic() - held.since) * 1000, 3)
        return outcome

    # -- verdicts and actions, as outcomes -----------------------------------------------
    def _verdict(self, message: Message, verdict: Any) -> Outcome | None:
        if isinstance(verdict, Drop):
            return Outcome(None)
        if isinstance(verdict, Edit):
            return Outcome(as_bytes(verdict.message), made="edit")
        members = {"error": verdict.error} if verdict.error is not None else {}
        if not members:
            members = {"result": verdict.result if verdict.result is not None else {}}
        return self._answer(message, member_answer(message.raw, members))

    def _fault(self, message: Message, action: Action) -> Outcome | None:
        name = action.name
        if name == "delay":
            return Outcome(message.raw, delay=action.seconds)
        if name == "drop":
            return Outcome(None)
        if name == "disconnect":
            return Outcome(None, disconnect=True)
        if name == "corrupt":
            return Outcome(corrupt(message.raw), made="corrupt")
        if name == "error":
            return self._answer(message, error_answer(message.raw, action.code, action.message))
        if name == "reply":
            assert action.body is not None
            return self._answer(message, member_answer(message.raw, action.body))
        if message.kind != "request":  # reply-recorded answers requests only
            return None
        reaction = action.recorded_session().receive(message.raw)
        finals = [out.data for out in reaction.out if out.final] or [o.data for o in reaction.out]
        return Outcome(None, answer=finals[-1]) if finals else None

    @staticmethod
    def _answer(message: Message, answer: bytes) -> Outcome | None:
        """An answer for a request goes back in place; for a response it replaces it."""
        if message.kind == "request":
            return Outcome(None, answer=answer)
        if message.kind in RESPONSE_KINDS:
            return Outcome(answer, made="edit")
        return None


def _consumed(message: Message) -> Outcome:
    """The answer to a request mcpeek injected: recorded (``consume``), never forwarded."""
    kept = Outcome(None)
    kept.act = _act(kept, message, "control", "an injected request")
    kept.act.action = "consume"
    return kept


def _act(outcome: Outcome, message: Message, by: str, rule: str) -> Act:
    if outcome.disconnect:
        action = "disconnect"
    elif outcome.answer is not None:
        action = "reply"
    elif outcome.forward is None:
        action = "drop"
    elif outcome.made is not None:
        action = outcome.made
    else:
        action = "delay"
    raw, raw_b64 = text_fields(message.raw)
    record = Act(action=action, dir=message.dir, ch=message.ch, by=by, rule=rule)
    record.raw, record.raw_b64 = raw, raw_b64
    if outcome.delay:
        record.ms = round(outcome.delay * 1000, 3)
    return record
