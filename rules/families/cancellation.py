"""Cancellation: ``notifications/cancelled`` for requests in flight, and no answer after it.

Correlation ties a cancellation to its flow by ``requestId`` (a server's
``notifications/cancelled`` may end the client's ``subscriptions/listen``);
one that matches nothing known becomes a flow of its own.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from typing import Any, ClassVar

import msgspec

from mcpeek.inspector.analysis import Conversation
from mcpeek.inspector.analysis.conversation import AMBIGUOUS
from mcpeek.inspector.analysis.peek import id_key
from mcpeek.rules.base import MODERN_SPEC, Findings, Rule
from mcpeek.rules.context import MessageContext
from mcpeek.rules.families._listens import CANCELLED, LISTEN, OTHER_SIDE, ListenIds, cancel_target
from mcpeek.rules.families._wire import WINDOW, shown, side

CANCELLATION = f"{MODERN_SPEC}/basic/patterns/cancellation"


class _CancelRule(Rule):
    """The cancellation rules: they follow the client's listen requests, whose ids a
    server may cancel, and judge each ``notifications/cancelled`` in :meth:`judge`."""

    kinds = frozenset({"request", "notification"})
    methods = frozenset({CANCELLED, LISTEN})

    def __init__(self) -> None:
        self._listens = ListenIds()

    def on_message(self, ctx: MessageContext) -> Findings:
        if ctx.kind == "request":
            if ctx.entry.dir == "c2s":
                self._listens.add(ctx)
            return None
        return self.judge(ctx)

    def judge(self, ctx: MessageContext) -> Findings:
        raise NotImplementedError

    def on_conversation_end(self, conversation: Conversation) -> Findings:
        self._listens.forget(conversation)
        return None


class CancelUnknownRequest(_CancelRule):
    id = "cancel.unknown-request"
    severity = "info"
    summary = "`notifications/cancelled` for an id that is not in flight"
    spec = f"{CANCELLATION}#behavior-requirements"

    def judge(self, ctx: MessageContext) -> Findings:
        target = cancel_target(ctx)
        if target is msgspec.UNSET:
            return None
        flow = ctx.flow
        sender = side(ctx.entry.dir)
        if flow.status == AMBIGUOUS:
            return None  # several requests of a sessionless origin have that id
        if flow.orphan is ctx.entry:
            if ctx.entry.dir == "s2c" and self._listens.get(ctx.conversation, target):
                return None  # tearing down a listen stream that just ended: fine
            if ctx.era == "modern" and ctx.entry.dir == "s2c":
                return None  # cancel.server-sent says so
            return [
                ctx.finding(
                    f"notifications/cancelled for id {shown(target)}: no request from the "
                    f"{sender} with that id is in flight"
                )
            ]
        if flow.method == LISTEN and flow.sender != ctx.entry.dir:
            return None  # the server tearing down a listen stream, before or after its result
        key = id_key(target)
        attempt = next((a for a in flow.attempts if id_key(a.request.id) == key), None)
        if attempt is None:
            return None
        if flow.cancel is not None and flow.cancel is not ctx.entry:
            return [
                ctx.finding(
                    f"notifications/cancelled for id {shown(target)}, already cancelled",
                    also=[flow.cancel.seq],
                )
            ]
        response = attempt.response
        if response is not None and response.seq < ctx.seq:
            return [
                ctx.finding(
                    f"notifications/cancelled for {attempt.request.method} (id {shown(target)}), "
                    "which was already answered",
                    also=[response.seq],
                )
            ]
        return None


class CancelServerSent(_CancelRule):
    id = "cancel.server-sent"
    severity = "error"
    era = "modern"
    summary = "the server sends `notifications/cancelled` not referencing a listen request"
    spec = f"{CANCELLATION}#behavior-requirements"

    def judge(self, ctx: MessageContext) -> Findings:
        if ctx.entry.dir != "s2c" or ctx.flow.method == LISTEN:
            return None
        target = cancel_target(ctx)
        if target is msgspec.UNSET or self._listens.get(ctx.conversation, target):
            return None
        return [
            ctx.finding(
                f"the server sent notifications/cancelled for id {shown(target)}, "
                "which is not a subscriptions/listen request"
            )
        ]


class CancelResponseAfterCancel(Rule):
    id = "cancel.response-after-cancel"
    severity = "warning"
    summary = "the server still answers a request after its cancellation"
    spec = f"{CANCELLATION}#behavior-requirements"
    kinds = frozenset({"notification", "result", "error"})
    kind_methods: ClassVar[Mapping[str, frozenset[str]]] = {"notification": frozenset({CANCELLED})}
    # an answer is judged only against a cancellation remembered: with none, no call
    idle_kinds = frozenset({"result", "error"})

    def __init__(self) -> None:
        # conversation → (canceller's side, request id key) → cancel seq (bounded): a
        # cancelled flow has ended, its bytes are gone when the late answer comes
        self._cancels: dict[str, OrderedDict[tuple[str, Any], int]] = {}

    def idle(self) -> bool:
        return not any(self._cancels.values())

    def on_message(self, ctx: MessageContext) -> Findings:
        key = ctx.conversation.key
        if ctx.kind == "notification":
            if ctx.entry.method == CANCELLED and ctx.flow.status != AMBIGUOUS:
                target = cancel_target(ctx)
                if target is not msgspec.UNSET:
                    memory = self._cancels.setdefault(key, OrderedDict())
                    memory[(ctx.entry.dir, id_key(target))] = ctx.seq
                    if len(memory) > WINDOW:
                        memory.popitem(last=False)
            return None
        cancels = self._cancels.get(key)
        if cancels is None:
            return None
        requester = OTHER_SIDE.get(ctx.entry.dir, "")
        cancel_seq = cancels.pop((requester, id_key(ctx.entry.id)), None)
        if cancel_seq is None:
            return None  # not cancelled
        attempt = ctx.attempt
        if attempt is None or attempt.response is not ctx.entry:
            return None  # not cancelled, or a duplicate (response.duplicate says so)
        if attempt.request.seq > cancel_seq:
            return None  # the cancel was for an earlier request with the same id
        return [
            ctx.finding(
                f"the {side(ctx.entry.dir)} answered {ctx.method} (id {shown(ctx.entry.id)}) "
                f"after the {side(requester)} cancelled it",
                also=[attempt.request.seq, cancel_seq],
            )
        ]

    def on_conversation_end(self, conversation: Conversation) -> Findings:
        self._cancels.pop(conversation.key, None)
        return None
