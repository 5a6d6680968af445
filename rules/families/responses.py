"""Pairing requests and responses: unknown ids, second answers, answered notifications, silence.

What correlation already knows is reused, not recomputed: an orphan
response is a flow with status ``orphan`` whose lone entry is the response,
a second answer is in ``attempt.duplicates``, an unanswered request a flow
that ended ``unanswered``.
"""

from __future__ import annotations

import msgspec

from mcpeek.inspector.analysis import Conversation, Flow
from mcpeek.rules.base import MODERN_SPEC, Finding, Findings, Rule
from mcpeek.rules.context import MessageContext
from mcpeek.rules.families.envelope import (
    BASIC,
    OTHER_SIDE,
    RESPONSES,
    id_phrase,
    is_notification_method,
)


# -- pairing ----------------------------------------------------------------------------
class ResponseUnknownId(Rule):
    id = "response.unknown-id"
    gated = frozenset({"result", "error"})
    envelope_gated = gated  # (a plain answer: no orphan)
    severity = "error"
    summary = "a response whose id matches no request from the other side"
    spec = f"{BASIC}#result-responses"
    kinds = RESPONSES

    def on_message(self, ctx: MessageContext) -> Findings:
        entry = ctx.entry
        if ctx.flow.status != "orphan" or ctx.flow.orphan is not entry:
            return None
        if entry.id is None:
            return None  # id.null's (an error for an unreadable request is allowed)
        if entry.id is msgspec.UNSET:
            if entry.kind == "error":
                return None  # "id?": an error may omit it (e.g. rejecting a notification POST)
            return [ctx.finding("result has no id, so it answers no request")]
        if ctx.era == "modern" and entry.ch == "stdio" and entry.dir == "c2s":
            return None  # stdio.client-response says it: a modern server sends no request
        other = OTHER_SIDE.get(entry.dir, "other side")
        return [
            ctx.finding(f"{entry.kind} for {id_phrase(entry)} matches no request from the {other}")
        ]


class ResponseDuplicate(Rule):
    id = "response.duplicate"
    gated = frozenset({"result", "error"})
    envelope_gated = gated  # (a plain answer: no second one)
    severity = "error"
    summary = "a second response to the same request"
    spec = f"{BASIC}#responses"
    kinds = RESPONSES

    def on_message(self, ctx: MessageContext) -> Findings:
        for each in ctx.flow.attempts:
            if each.duplicates:
                break
        else:
            return None  # the common case: no second answer in the flow at all
        attempt = ctx.attempt
        if attempt is None or not any(d is ctx.entry for d in attempt.duplicates):
            return None
        first = attempt.response
        also = [attempt.request.seq] + ([first.seq] if first is not None else [])
        return [
            ctx.finding(
                f"second response to {ctx.flow.method} ({id_phrase(attempt.request)}), "
                f"already answered at seq {first.seq if first is not None else '?'}",
                also=also,
            )
        ]


class ResponseToNotification(Rule):
    id = "response.to-notification"
    gated = frozenset({"result", "error"})
    envelope_gated = gated  # (it answers a request the spec defines)
    severity = "error"
    summary = "a response to a message that was a notification"
    spec = f"{BASIC}#notifications"
    kinds = RESPONSES

    def on_message(self, ctx: MessageContext) -> Findings:
        # Every request of a flow has the flow's method (a retry is matched by it).
        if not is_notification_method(ctx.flow.method):
            return None
        request = ctx.request
        if request is None or not is_notification_method(request.method):
            return None
        return [
            ctx.finding(
                f"{ctx.entry.kind} answers {request.method} ({id_phrase(request)}), "
                "a notification (the receiver MUST NOT respond)",
                also=[request.seq],
            )
        ]


class NotificationWithId(Rule):
    id = "notification.with-id"
    gated = frozenset({"request"})
    envelope_gated = gated  # (a request the spec defines)
    severity = "error"
    summary = "a `notifications/*` method sent with an `id`"
    spec = f"{BASIC}#notifications"
    kinds = frozenset({"request"})

    def on_message(self, ctx: MessageContext) -> Findings:
        if not is_notification_method(ctx.entry.method):
            return None
        return [
            ctx.finding(
                f"{ctx.entry.method} carries {id_phrase(ctx.entry)} "
                "(notifications MUST NOT include an id)"
            )
        ]


# -- unanswered ---------------------------------------------------------------------------
class RequestUnanswered(Rule):
    id = "request.unanswered"
    severity = "warning"
    summary = "a request with no response by the end of the connection, or after the timeout"
    spec = f"{MODERN_SPEC}/basic/patterns/cancellation#timeouts"
    flow_statuses = frozenset({"unanswered"})

    def on_flow_end(self, flow: Flow, conversation: Conversation) -> Findings:
        # Cancelled flows end "cancelled" and open subscriptions/listen streams
        # "closed": only "unanswered" is a request left without an answer.
        if flow.status != "unanswered" or not flow.attempts:
            return None
        if is_notification_method(flow.method):
            return None  # notification.with-id's: it must not be answered at all
        if flow.method == "server/discover" and conversation.era == "legacy":
            return None  # a dual-era probe a legacy server may leave unanswered (stdio page)
        attempt = next((a for a in reversed(flow.attempts) if a.response is None), None)
        if attempt is None:
            return None
        request = attempt.request
        when = "within the timeout" if flow.timed_out else "before the connection ended"
        who = "server" if request.dir == "c2s" else "client"
        return [
            Finding(
                msgs=[request.seq],
                message=f"{flow.method} ({id_phrase(request)}) got no response from the {who} "
                f"{when}",
            )
        ]
