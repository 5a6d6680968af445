"""Progress notifications: known tokens, increasing values, none after the response.

Correlation ties a ``notifications/progress`` to its flow by token (also
after the response, when the flow has already ended); a token nobody issued
makes a flow of its own (``orphan``).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from typing import Any, ClassVar

import msgspec

from mcpeek.inspector.analysis import Attempt, Conversation
from mcpeek.inspector.analysis.peek import id_key
from mcpeek.rules.base import MODERN_SPEC, Findings, Rule
from mcpeek.rules.context import PARAMS_BIT, MessageContext
from mcpeek.rules.families._listens import OTHER_SIDE
from mcpeek.rules.families._server import peeked_params
from mcpeek.rules.families._wire import WINDOW, as_dict, shown

PROGRESS = f"{MODERN_SPEC}/basic/patterns/progress"


def token_attempt(ctx: MessageContext, bare: Any) -> Attempt | None:
    """The last attempt of the notification's flow that carried the token whose
    :func:`id_key` is ``bare`` (the caller's: it keys its own table by it too).

    Correlation keys a token by the side that issued it (``(dir, id_key)``): each
    side's requests have their own tokens; a bare ``id_key`` is accepted too."""
    keyed = (OTHER_SIDE.get(ctx.entry.dir, ""), bare)
    for attempt in reversed(ctx.flow.attempts):
        if attempt.progress_token in (keyed, bare):
            return attempt
    return None


class _ProgressParams(msgspec.Struct, gc=False):
    token: Any = msgspec.field(default=msgspec.UNSET, name="progressToken")
    progress: Any = None


class _ProgressMessage(msgspec.Struct, gc=False):
    params: _ProgressParams | None = None


#: Reads just the two members of a progress notification (the others are skipped,
#: not built): several times cheaper than decoding the whole params.
_PEEK = msgspec.json.Decoder(_ProgressMessage)


def progress_parts(ctx: MessageContext) -> tuple[Any, Any] | None:
    """``(token, progress)`` of a ``notifications/progress``; ``None`` without a token."""
    raw = ctx.entry.record.raw
    if raw is not None and raw[:1] == "{" and not ctx.computed & PARAMS_BIT:
        # One object (not a batch), its params not decoded yet: what correlation peeked
        # (the same two members, read as _PEEK reads them), or a peek of our own. What
        # neither can read (params not an object…) is left to the careful decode below.
        known = peeked_params(ctx)
        if known is not None:
            if known.progress_token is msgspec.UNSET:
                return None  # schema.notification says so
            progress = known.progress
            return known.progress_token, None if progress is msgspec.UNSET else progress
        try:
            peeked = _PEEK.decode(raw).params
        except (msgspec.MsgspecError, UnicodeError, RecursionError):
            pass
        else:
            if peeked is None or peeked.token is msgspec.UNSET:
                return None  # schema.notification says so
            return peeked.token, peeked.progress
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
        # (a tuple of types: ``int | float`` would build a union object on every call)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return None  # schema.notification says so
        bare = id_key(token)
        attempt = token_attempt(ctx, bare)
        if attempt is None:
            return None
        memory = self._last.get(ctx.conversation.key)
        if memory is None:
            memory = self._last[ctx.conversation.key] = OrderedDict()
        key = (attempt.request.seq, bare)
        previous = memory.pop(key, None)
        memory[key] = (value, ctx.seq)  # (popped first: it goes last, the newest)
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
    raw = ctx.entry.record.raw  # the text, when there is one: no bytes to build
    mentioned = '"task"' in raw if raw is not None else b'"task"' in ctx.wire
    if not mentioned:
        return False  # the common case, without a decode
    result = as_dict(ctx.result)
    if result is None:
        return False
    return isinstance(result.get("task"), dict) or result.get("resultType") == "task"


# (Loops, not any() of a generator: these run on most results and progress notifications,
# and building the generator cost more than the one or two attempts it looks at.)
def _any_token(attempts: list[Attempt]) -> bool:
    for attempt in attempts:  # noqa: SIM110
        if attempt.progress_token is not msgspec.UNSET:
            return True
    return False


def _any_answered(attempts: list[Attempt]) -> bool:
    for attempt in attempts:  # noqa: SIM110
        if attempt.response is not None:
            return True
    return False


PROGRESS_ASKED = frozenset({"progress"})
ANSWERED = frozenset({"answered"})


class ProgressAfterResponse(Rule):
    id = "progress.after-response"
    severity = "error"
    summary = "progress for a request that already has its response"
    spec = f"{PROGRESS}#implementation-notes"
    kinds = frozenset({"notification", "result"})
    kind_methods: ClassVar[Mapping[str, frozenset[str]]] = {
        "notification": frozenset({"notifications/progress"})
    }

    @classmethod
    def facts_needed(
        cls, kind: str, method: str | None, era: str | None, direction: str
    ) -> frozenset[str]:
        # (the tests that open on_message: a result of a flow that asked for progress, a
        # progress notification of a flow with an answer)
        return PROGRESS_ASKED if kind == "result" else ANSWERED

    def __init__(self) -> None:
        # conversation → seqs of requests answered with a task handle (bounded); the
        # bytes of an ended flow are gone by the time a later progress arrives
        self._tasks: dict[str, OrderedDict[int, None]] = {}

    def on_message(self, ctx: MessageContext) -> Findings:
        if ctx.kind == "result":
            if not _any_token(ctx.flow.attempts):
                return None  # the common case: no progress asked for in this flow
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
        if not _any_answered(ctx.flow.attempts):
            return None  # the common case: progress while the request is in flight (no decode)
        parts = progress_parts(ctx)
        if parts is None:
            return None
        attempt = token_attempt(ctx, id_key(parts[0]))
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
