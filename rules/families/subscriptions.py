"""Subscriptions (modern): ``subscriptions/listen`` streams and the notifications on them.

Correlation ties subscription events to their listen flow by
``_meta["io.modelcontextprotocol/subscriptionId"]`` or, on HTTP, by the stream they arrive
on; a subscription id nobody issued makes a flow of its own (``orphan``).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from typing import Any, ClassVar

import msgspec

from mcpeek.inspector.analysis import Conversation, Flow
from mcpeek.inspector.analysis.peek import may_hold
from mcpeek.rules.base import MODERN_SPEC, Findings, Rule
from mcpeek.rules.context import META_BIT, MessageContext
from mcpeek.rules.families._listens import CANCELLED, LISTEN, ListenIds
from mcpeek.rules.families._wire import WINDOW, as_dict, shown

SUBSCRIPTIONS = f"{MODERN_SPEC}/basic/patterns/subscriptions"
HTTP_TRANSPORT = f"{MODERN_SPEC}/basic/transports/streamable-http"
SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
ACKNOWLEDGED = "notifications/subscriptions/acknowledged"
REQUEST_SCOPED = frozenset({"notifications/progress", "notifications/message"})
#: Change notification → the filter field of ``subscriptions/listen`` that asks for it.
FILTER_FIELD: dict[str, str] = {
    "notifications/tools/list_changed": "toolsListChanged",
    "notifications/prompts/list_changed": "promptsListChanged",
    "notifications/resources/list_changed": "resourcesListChanged",
    "notifications/resources/updated": "resourceSubscriptions",
}
#: Notifications that only ever travel on a listen stream.
STREAM_ONLY = frozenset({*FILTER_FIELD, ACKNOWLEDGED})
OPEN_STATUSES = frozenset({"pending", "input_required"})


def subscription_id(ctx: MessageContext) -> Any:
    if not ctx.computed & META_BIT and not may_hold(ctx.entry.record, "subscriptionId"):
        return msgspec.UNSET  # the common case, without a decode
    meta = ctx.meta
    return meta.get(SUBSCRIPTION_ID, msgspec.UNSET) if meta is not None else msgspec.UNSET


def on_listen_flow(ctx: MessageContext) -> bool:
    """The notification was attached to a ``subscriptions/listen`` flow as one of its
    stream's messages (not as its cancellation)."""
    flow = ctx.flow
    return (
        flow.method == LISTEN
        and ctx.entry.dir == "s2c"
        and bool(flow.notifications)
        and flow.notifications[-1] is ctx.entry  # just attached (no scan of a long stream)
    )


def is_open(flow: Flow) -> bool:
    return flow.status in OPEN_STATUSES


# -- subscriptions (modern) ----------------------------------------------------------------


class SubscriptionAckNotFirst(Rule):
    id = "subscription.ack-not-first"
    gated = frozenset({"result"})
    severity = "error"
    era = "modern"
    summary = (
        "a notification on a subscription before its `notifications/subscriptions/acknowledged`"
    )
    spec = f"{SUBSCRIPTIONS}#acknowledgment"
    kinds = frozenset({"notification", "result"})
    directions: ClassVar[Mapping[str, str]] = {"notification": "s2c", "result": "s2c"}
    flow_needs = frozenset({"listen"})  # (it judges listen flows only)

    def __init__(self) -> None:
        # conversation → listen flow number → "acked"/"reported" (bounded: no cleanup at
        # on_flow_end, which a flow's final response reaches on_message after)
        self._state: dict[str, OrderedDict[int, str]] = {}

    def on_message(self, ctx: MessageContext) -> Findings:
        flow = ctx.flow
        if flow.method != LISTEN or ctx.entry.dir != "s2c":
            return None
        if ctx.kind == "result":
            if subscription_id(ctx) is msgspec.UNSET:
                return None  # the graceful-close result must carry it; it is not a notification
        elif not on_listen_flow(ctx):
            return None
        method = ctx.entry.method
        if method in REQUEST_SCOPED or method == CANCELLED:
            return None  # subscription.request-scoped / the teardown
        states = self._state.setdefault(ctx.conversation.key, OrderedDict())
        if flow.number in states:
            return None
        states[flow.number] = "acked" if method == ACKNOWLEDGED else "reported"
        if len(states) > WINDOW:
            states.popitem(last=False)
        if method == ACKNOWLEDGED:
            return None
        what = method or "the listen result"
        request = flow.request
        return [
            ctx.finding(
                f"{what} on the subscription of request id {shown(request.id if request else '?')} "
                "before notifications/subscriptions/acknowledged",
                also=[request.seq] if request else [],
            )
        ]

    def on_conversation_end(self, conversation: Conversation) -> Findings:
        self._state.pop(conversation.key, None)
        return None


class SubscriptionIdMissing(Rule):
    id = "subscription.id-missing"
    severity = "error"
    era = "modern"
    summary = "a notification on a listen stream without `io.modelcontextprotocol/subscriptionId`"
    spec = f"{SUBSCRIPTIONS}#receiving-notifications"
    kinds = frozenset({"notification"})
    directions: ClassVar[Mapping[str, str]] = {"notification": "s2c"}
    flow_needs = frozenset({"listen"})  # (a listen flow, or a conversation with subscriptions)

    def on_message(self, ctx: MessageContext) -> Findings:
        method = ctx.entry.method
        if ctx.entry.dir != "s2c" or method in REQUEST_SCOPED or method == CANCELLED:
            return None
        on_stream = on_listen_flow(ctx)
        conversation = ctx.conversation
        if not on_stream and (
            conversation.transport == "http"
            or method not in STREAM_ONLY
            or not conversation.subscriptions
        ):
            return None  # judged only on a listen stream, or stream-only on stdio while one is
        if subscription_id(ctx) is not msgspec.UNSET:
            return None
        if on_stream:  # HTTP: it came on the listen stream itself
            request = ctx.flow.request
            return [
                ctx.finding(
                    f"{method} on the listen stream of request id "
                    f"{shown(request.id if request else '?')} has no subscriptionId in _meta",
                    also=[request.seq] if request else [],
                )
            ]
        listens = sorted(
            flow.request.seq
            for flow in conversation.subscriptions.values()
            if flow.request is not None and is_open(flow)
        )
        if not listens:
            return None  # nothing listens: subscription.not-requested says so
        return [
            ctx.finding(
                f"{method} sent while subscriptions/listen streams are open, "
                "without the subscriptionId that says which one it belongs to",
                also=listens[:8],
            )
        ]


def _uri_requested(uri: Any, subscribed: Any) -> bool:
    """``resources/updated`` may name a sub-resource of a subscribed URI."""
    if not isinstance(subscribed, list):
        return False
    if not isinstance(uri, str):
        return True  # schema.notification says so
    for item in subscribed:
        if isinstance(item, str) and (uri == item or uri.startswith(item.rstrip("/") + "/")):
            return True
    return False


class SubscriptionNotRequested(Rule):
    id = "subscription.not-requested"
    severity = "error"
    era = "modern"
    summary = "a change notification of a type the client did not ask for in the filter"
    spec = f"{SUBSCRIPTIONS}#opening-a-stream"
    kinds = frozenset({"request", "notification"})
    methods = frozenset({LISTEN, *FILTER_FIELD})
    flow_methods = frozenset({LISTEN})

    def __init__(self) -> None:
        self._listens = ListenIds()
        # conversation → listen flow number → its filter, read from the request
        self._filters: dict[str, OrderedDict[int, dict[str, Any]]] = {}

    def on_message(self, ctx: MessageContext) -> Findings:
        if ctx.kind == "request":
            if ctx.entry.dir == "c2s":
                self._listens.add(ctx)
                filters = self._filters.setdefault(ctx.conversation.key, OrderedDict())
                params = as_dict(ctx.params) or {}
                filters[ctx.flow.number] = as_dict(params.get("notifications")) or {}
                if len(filters) > WINDOW:
                    filters.popitem(last=False)
            return None
        method = ctx.entry.method
        field = FILTER_FIELD.get(method or "")
        if ctx.entry.dir != "s2c" or field is None:
            return None  # (field None: a notification named subscriptions/listen)
        if on_listen_flow(ctx):
            known = self._filters.get(ctx.conversation.key)
            wanted = known.get(ctx.flow.number) if known is not None else None
            if wanted is None:
                return None  # its request was not seen as modern: nothing to judge by
            params = as_dict(ctx.params) or {}
            if field == "resourceSubscriptions":
                if _uri_requested(params.get("uri"), wanted.get(field)):
                    return None
                detail = f"resourceSubscriptions does not list {shown(params.get('uri'))}"
            elif wanted.get(field) is True:
                return None
            else:
                detail = f"it did not set {field}"
            request = ctx.flow.request
            return [
                ctx.finding(
                    f"{method} on the subscription of request id "
                    f"{shown(request.id if request else '?')}, but {detail}",
                    also=[request.seq] if request else [],
                )
            ]
        sub = subscription_id(ctx)
        conversation = ctx.conversation
        if sub is not msgspec.UNSET:
            if self._listens.get(conversation, sub):
                return None  # its stream just ended: crossed on the wire
            return [
                ctx.finding(
                    f"{method} for subscriptionId {shown(sub)}, which no "
                    "subscriptions/listen request opened"
                )
            ]
        if ctx.flow.method == LISTEN:
            return None  # attached otherwise (not expected)
        if conversation.transport != "http" and any(
            is_open(flow) for flow in conversation.subscriptions.values()
        ):
            return None  # subscription.id-missing says so
        return [
            ctx.finding(
                f"{method} sent outside any subscriptions/listen stream "
                "(the client asked for no change notifications here)"
            )
        ]

    def on_flow_end(self, flow: Flow, conversation: Conversation) -> Findings:
        filters = self._filters.get(conversation.key)
        if flow.method == LISTEN and filters is not None:
            filters.pop(flow.number, None)
        return None

    def on_conversation_end(self, conversation: Conversation) -> Findings:
        self._listens.forget(conversation)
        self._filters.pop(conversation.key, None)
        return None


class SubscriptionRequestScoped(Rule):
    id = "subscription.request-scoped"
    severity = "error"
    era = "modern"
    summary = "`notifications/progress` or `notifications/message` delivered on a listen stream"
    spec = f"{HTTP_TRANSPORT}#receiving-messages"
    kinds = frozenset({"notification"})
    methods = REQUEST_SCOPED
    directions: ClassVar[Mapping[str, str]] = {"notification": "s2c"}

    def on_message(self, ctx: MessageContext) -> Findings:
        if ctx.entry.dir != "s2c":
            return None
        method = ctx.entry.method
        sub = subscription_id(ctx)
        if sub is not msgspec.UNSET:
            return [
                ctx.finding(
                    f"{method} is request-scoped but carries subscriptionId {shown(sub)} "
                    "(delivered on a listen stream)"
                )
            ]
        stream = ctx.conversation.channel_flows.get(ctx.entry.ch)
        if stream is None or stream.method != LISTEN or ctx.conversation.transport != "http":
            return None
        request = stream.request
        return [
            ctx.finding(
                f"{method} is request-scoped but arrived on the listen stream of request id "
                f"{shown(request.id if request else '?')}",
                also=[request.seq] if request else [],
            )
        ]
