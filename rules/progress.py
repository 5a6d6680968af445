"""Progress notifications: known tokens, increasing values, none after the response.

Correlation ties a ``notifications/progress`` to its flow by token (also
after the response, when the flow has already ended); a token nobody issued
makes a flow of its own (``orphan``).
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import msgspec

from inspector.analysis import Attempt, Conversation
from inspector.analysis.peek import id_key
from rules._listens import OTHER_SIDE
from rules._wire import WINDOW, as_dict, shown
from rules.base import MODERN_SPEC, Findings, Rule
from rules.context import MessageContext

PROGRESS = f"{MODERN_SPEC}/basic/patterns/progress"


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
