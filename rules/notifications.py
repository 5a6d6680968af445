"""Progress, cancellation and subscription notifications.

Correlation ties each of them to its flow: progress by token (also after the
response, when the flow has already ended), cancellation by ``requestId``
(a server's ``notifications/cancelled`` may end the client's
``subscriptions/listen``), subscription events by
``_meta["io.modelcontextprotocol/subscriptionId"]`` or, on HTTP, by the
stream they arrive on. What matches nothing becomes a flow of its own
(``orphan`` for a progress token or subscription id nobody issued,
``notification`` for a cancellation of nothing known).
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import msgspec

from inspector.analysis import Attempt, Conversation, Flow
from inspector.analysis.peek import id_key
from rules.base import MODERN_SPEC, Findings, Rule
from rules.context import MessageContext
from rules.lifecycle import WINDOW, as_dict, shown, side

PROGRESS = f"{MODERN_SPEC}/basic/patterns/progress"
CANCELLATION = f"{MODERN_SPEC}/basic/patterns/cancellation"
SUBSCRIPTIONS = f"{MODERN_SPEC}/basic/patterns/subscriptions"
HTTP_TRANSPORT = f"{MODERN_SPEC}/basic/transports/streamable-http"
SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
LISTEN = "subscriptions/listen"
ACKNOWLEDGED = "notifications/subscriptions/acknowledged"
CANCELLED = "notifications/cancelled"
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
OTHER_SIDE = {"c2s": "s2c", "s2c": "c2s"}


def subscription_id(ctx: MessageContext) -> Any:
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


def token_attempt(ctx: MessageContext, token: Any) -> Attempt | None:
    """The last attempt of the notification's flow that carried ``token``.

    Correlation keys a token by the side that issued it (``(dir, id_key)``): each
    side's requests have their own tokens; a bare ``id_key`` is accepted too."""
    bare = id_key(token)
    keyed = (OTHER_SIDE.get(ctx.entry.dir, ""), bare)
    for attempt in reversed(ctx.flow.attempts):
        if attempt.progress_token in (keyed, bare):
            return attempt
    return None


# -- progress ------------------------------------------------------------------------------


def progress_parts(ctx: MessageContext) -> tuple[Any, Any] | None:
    """``(token, progress)`` of a ``notifications/progress``; ``None`` without a token."""
    params = as_dict(ctx.params)
    if params is None or "progressToken" not in params:
        return None  # schema.notification says so
    return params["progressToken"], params.get("progress")


class ProgressUnknownToken(Rule):
    id = "progress.unknown-token"
    severity = "error"
    summary = "`notifications/progress` with a token no in-flight request carries"
    spec = f"{PROGRESS}#behavior-requirements"
    kinds = frozenset({"notification"})
    methods = frozenset({"notifications/progress"})

    def on_message(self, ctx: MessageContext) -> Findings:
        if ctx.flow.orphan is not ctx.entry or ctx.flow.status != "orphan":
            return None
        parts = progress_parts(ctx)
        if parts is None:
            return None
        return [
            ctx.finding(
                f"notifications/progress for token {shown(parts[0])}, "
                "which no request in flight carries"
            )
        ]


class ProgressNotIncreasing(Rule):
    id = "progress.not-increasing"
    severity = "error"
    summary = "a progress value not greater than the previous one for that token"
    spec = f"{PROGRESS}#progress-flow"
    kinds = frozenset({"notification"})
    methods = frozenset({"notifications/progress"})

    def __init__(self) -> None:
        # conversation → (request seq, token) → (last progress, its seq); bounded
        self._last: dict[str, OrderedDict[tuple[int, Any], tuple[float, int]]] = {}

    def on_message(self, ctx: MessageContext) -> Findings:
        if ctx.flow.orphan is ctx.entry:
            return None
        parts = progress_parts(ctx)
        if parts is None:
            return None
        token, value = parts
        if isinstance(value, bool) or not isinstance(value, int | float):
            return None  # schema.notification says so
        attempt = token_attempt(ctx, token)
        if attempt is None:
            return None
        memory = self._last.setdefault(ctx.conversation.key, OrderedDict())
        key = (attempt.request.seq, id_key(token))
        previous = memory.get(key)
        memory[key] = (value, ctx.seq)
        memory.move_to_end(key)
        if len(memory) > WINDOW:
            memory.popitem(last=False)
        if previous is None or value > previous[0]:
            return None
        return [
            ctx.finding(
                f"progress {shown(value)} for token {shown(token)} is not greater than "
                f"the previous {shown(previous[0])}",
                also=[previous[1]],
            )
        ]

    def on_conversation_end(self, conversation: Conversation) -> Findings:
        self._last.pop(conversation.key, None)
        return None


def is_task_handle(ctx: MessageContext) -> bool:
    """A result that hands out a task (2025-11-25 ``CreateTaskResult``, the tasks
    extension's ``resultType: "task"``): progress legitimately goes on after it."""
    if b'"task"' not in ctx.wire:
        return False  # the common case, without a decode
    result = as_dict(ctx.result)
    if result is None:
        return False
    return isinstance(result.get("task"), dict) or result.get("resultType") == "task"


class ProgressAfterResponse(Rule):
    id = "progress.after-response"
    severity = "error"
    summary = "progress for a request that already has its response"
    spec = f"{PROGRESS}#implementation-notes"
    kinds = frozenset({"notification", "result"})

    def __init__(self) -> None:
        # conversation → seqs of requests answered with a task handle (bounded); the
        # bytes of an ended flow are gone by the time a later progress arrives
        self._tasks: dict[str, OrderedDict[int, None]] = {}

    def on_message(self, ctx: MessageContext) -> Findings:
        if ctx.kind == "result":
            attempt = ctx.attempt
            if (
                attempt is not None
                and attempt.progress_token is not msgspec.UNSET
                and attempt.response is ctx.entry
                and is_task_handle(ctx)
            ):
                tasks = self._tasks.setdefault(ctx.conversation.key, OrderedDict())
                tasks[attempt.request.seq] = None
                if len(tasks) > WINDOW:
                    tasks.popitem(last=False)
            return None
        if ctx.entry.method != "notifications/progress" or ctx.flow.orphan is ctx.entry:
            return None
        parts = progress_parts(ctx)
        if parts is None:
            return None
        attempt = token_attempt(ctx, parts[0])
        if attempt is None or attempt.response is None or attempt.response.seq > ctx.seq:
            return None
        request, response = attempt.request, attempt.response
        if request.seq in self._tasks.get(ctx.conversation.key, ()):
            return None
        return [
            ctx.finding(
                f"notifications/progress for token {shown(parts[0])} after the response to "
                f"{request.method} (id {shown(request.id)})",
                also=[request.seq, response.seq],
            )
        ]

    def on_conversation_end(self, conversation: Conversation) -> Findings:
        self._tasks.pop(conversation.key, None)
        return None


# -- cancellation --------------------------------------------------------------------------


class _ListenIds:
    """The ids of the client's ``subscriptions/listen`` requests, per conversation."""

    def __init__(self) -> None:
        self._ids: dict[str, OrderedDict[Any, int]] = {}

    def add(self, ctx: MessageContext) -> None:
        ids = self._ids.setdefault(ctx.conversation.key, OrderedDict())
        ids[id_key(ctx.entry.id)] = ctx.seq
        if len(ids) > WINDOW:
            ids.popitem(last=False)

    def get(self, conversation: Conversation, value: Any) -> int | None:
        ids = self._ids.get(conversation.key)
        return ids.get(id_key(value)) if ids is not None else None

    def forget(self, conversation: Conversation) -> None:
        self._ids.pop(conversation.key, None)


def cancel_target(ctx: MessageContext) -> Any:
    params = as_dict(ctx.params)
    if params is None or "requestId" not in params:
        return msgspec.UNSET  # schema.notification says so
    return params["requestId"]


class _CancelRule(Rule):
    """The cancellation rules: they follow the client's listen requests, whose ids a
    server may cancel, and judge each ``notifications/cancelled`` in :meth:`judge`."""

    kinds = frozenset({"request", "notification"})
    methods = frozenset({CANCELLED, LISTEN})

    def __init__(self) -> None:
        self._listens = _ListenIds()

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

    def __init__(self) -> None:
        # conversation → (canceller's side, request id key) → cancel seq (bounded): a
        # cancelled flow has ended, its bytes are gone when the late answer comes
        self._cancels: dict[str, OrderedDict[tuple[str, Any], int]] = {}

    def on_message(self, ctx: MessageContext) -> Findings:
        key = ctx.conversation.key
        if ctx.kind == "notification":
            if ctx.entry.method == CANCELLED:
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
        attempt = ctx.attempt
        if cancel_seq is None or attempt is None or attempt.response is not ctx.entry:
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


# -- subscriptions (modern) ----------------------------------------------------------------


class SubscriptionAckNotFirst(Rule):
    id = "subscription.ack-not-first"
    severity = "error"
    era = "modern"
    summary = (
        "a notification on a subscription before its `notifications/subscriptions/acknowledged`"
    )
    spec = f"{SUBSCRIPTIONS}#acknowledgment"
    kinds = frozenset({"notification", "result"})

    def __init__(self) -> None:
        # conversation → listen flow number → "acked" / "reported" (bounded: a flow's
        # final response reaches on_message after on_flow_end, so no cleanup there)
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

    def on_message(self, ctx: MessageContext) -> Findings:
        method = ctx.entry.method
        if (
            ctx.entry.dir != "s2c"
            or method in REQUEST_SCOPED
            or method == CANCELLED
            or subscription_id(ctx) is not msgspec.UNSET
        ):
            return None
        if on_listen_flow(ctx):  # HTTP: it came on the listen stream itself
            request = ctx.flow.request
            return [
                ctx.finding(
                    f"{method} on the listen stream of request id "
                    f"{shown(request.id if request else '?')} has no subscriptionId in _meta",
                    also=[request.seq] if request else [],
                )
            ]
        conversation = ctx.conversation
        if conversation.transport == "http" or method not in STREAM_ONLY:
            return None
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

    def __init__(self) -> None:
        self._listens = _ListenIds()
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
        if ctx.entry.dir != "s2c":
            return None
        method = ctx.entry.method or ""
        field = FILTER_FIELD[method]
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


__all__ = [
    "CancelResponseAfterCancel",
    "CancelServerSent",
    "CancelUnknownRequest",
    "ProgressAfterResponse",
    "ProgressNotIncreasing",
    "ProgressUnknownToken",
    "SubscriptionAckNotFirst",
    "SubscriptionIdMissing",
    "SubscriptionNotRequested",
    "SubscriptionRequestScoped",
]
