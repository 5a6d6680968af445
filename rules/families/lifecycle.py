"""The legacy lifecycle (2025-11-25 and earlier): the ``initialize`` handshake.

The legacy era opens with an ``initialize`` handshake: ``initialize`` first,
its response, then ``notifications/initialized``; the negotiated version
holds for the session. A ``ping`` before ``initialize`` is allowed, and so is
a dual-era client's ``server/discover`` probe.
"""

from __future__ import annotations

from mcpeek.inspector.analysis import Conversation
from mcpeek.rules.base import LEGACY_SPEC, Finding, Findings, Rule
from mcpeek.rules.context import MessageContext
from mcpeek.rules.families._wire import side, where

LIFECYCLE = f"{LEGACY_SPEC}/basic/lifecycle"
#: On HTTP, a notification POST and the next request POST may cross: an
#: ``initialized`` that follows a request this closely is not "missing".
HTTP_GRACE_S = 1.0


# -- lifecycle (legacy) --------------------------------------------------------------------


SESSION = "http:session:"  # the key of a legacy HTTP session's conversation


class LifecycleNotInitializedFirst(Rule):
    id = "lifecycle.not-initialized-first"
    severity = "error"
    era = "legacy"
    summary = "the first interaction is not `initialize`"
    spec = f"{LIFECYCLE}#initialization"
    kinds = frozenset({"request", "notification"})

    def __init__(self) -> None:
        self._decided: set[str] = set()
        self._sessions = False  # some server of this capture minted an Mcp-Session-Id

    def on_message(self, ctx: MessageContext) -> Findings:
        key = ctx.conversation.key
        if key in self._decided:
            return None
        if key.startswith(SESSION):
            self._sessions = True
        elif self._sessions and ctx.conversation.shared_origin:
            # A POST without the Mcp-Session-Id a session server issued: it lands outside
            # its session, but it is no new conversation (http.session-missing says so).
            return None
        method = ctx.entry.method
        if method == "initialize" and ctx.entry.dir == "c2s":
            self._decided.add(key)
            return None
        if ctx.kind == "request":
            if method in ("ping", "server/discover"):
                return None  # allowed before initialize; a dual-era probe
        elif not (ctx.entry.dir == "c2s" and method == "notifications/initialized"):
            return None  # other notifications (a probe's cancellation, logging…)
        self._decided.add(key)
        return [
            ctx.finding(
                f"the {side(ctx.entry.dir)} sent {method} before any initialize request "
                "(initialization MUST be the first interaction)"
            )
        ]

    def on_conversation_end(self, conversation: Conversation) -> Findings:
        self._decided.discard(conversation.key)
        return None


class _Handshake:
    __slots__ = ("init_request", "init_result", "initialized", "pending", "reported")

    def __init__(self) -> None:
        self.init_request = 0  # seq of the last initialize request
        self.init_result = 0  # seq of its successful response
        self.initialized = 0  # seq of notifications/initialized
        self.pending: tuple[int, float] | None = None  # HTTP: (request seq, t)
        self.reported = False


class LifecycleEarlyRequest(Rule):
    id = "lifecycle.early-request"
    severity = "warning"
    era = "legacy"
    summary = "a request other than `ping` before the handshake allows it"
    spec = f"{LIFECYCLE}#initialization"
    kinds = frozenset({"request", "notification", "result", "error"})

    def __init__(self) -> None:
        self._state: dict[str, _Handshake] = {}

    def on_message(self, ctx: MessageContext) -> Findings:
        key = ctx.conversation.key
        state = self._state.get(key)
        method = ctx.method
        if ctx.kind == "request" and method == "initialize" and ctx.entry.dir == "c2s":
            state = self._state.setdefault(key, _Handshake())
            state.init_request, state.init_result = ctx.seq, 0
            return None
        if state is None or not state.init_request:
            return None  # before initialize: lifecycle.not-initialized-first says it
        if ctx.is_response:
            if method == "initialize" and ctx.entry.dir == "s2c":
                state.init_result = ctx.seq
            return None
        if ctx.kind == "notification":
            if ctx.entry.dir == "c2s" and method == "notifications/initialized":
                state.initialized = ctx.seq
            return None
        if method == "ping":
            return None
        if ctx.entry.dir == "c2s":
            if state.init_result or method == "server/discover":
                return None
            return [
                ctx.finding(
                    f"the client sent {where(ctx)} before the server answered initialize",
                    also=[state.init_request],
                )
            ]
        if state.initialized or state.reported:
            return None
        state.reported = True  # once: a client that never sends it would make this noise
        return [
            ctx.finding(
                f"the server sent {where(ctx)} before the client's notifications/initialized",
                also=[state.init_request],
            )
        ]

    def on_conversation_end(self, conversation: Conversation) -> Findings:
        self._state.pop(conversation.key, None)
        return None


class LifecycleInitializedMissing(Rule):
    id = "lifecycle.initialized-missing"
    severity = "error"
    era = "legacy"
    summary = "the client sends further requests without having sent `notifications/initialized`"
    spec = f"{LIFECYCLE}#initialization"
    kinds = frozenset({"request", "notification", "result"})

    def __init__(self) -> None:
        self._state: dict[str, _Handshake] = {}

    def on_message(self, ctx: MessageContext) -> Findings:
        key = ctx.conversation.key
        state = self._state.get(key)
        method = ctx.method
        if ctx.kind == "result":
            if method == "initialize" and ctx.entry.dir == "s2c":
                state = self._state.setdefault(key, _Handshake())
                state.init_result = ctx.seq
            return None
        if state is None or ctx.entry.dir != "c2s" or state.reported:
            return None
        if ctx.kind == "notification":
            if method != "notifications/initialized" or state.initialized:
                return None
            state.initialized = ctx.seq
            pending, state.pending = state.pending, None
            if pending is None:
                return None
            request_seq, t = pending
            if ctx.entry.t - t <= HTTP_GRACE_S:
                return None  # crossed on the wire (HTTP)
            state.reported = True
            return [self._finding(request_seq, late=ctx.seq)]
        if state.initialized or method in ("ping", "initialize") or state.pending:
            return None
        if ctx.conversation.transport == "http":
            state.pending = (ctx.seq, ctx.entry.t)
            return None
        state.reported = True
        return [self._finding(ctx.seq)]

    def _finding(self, request_seq: int, late: int = 0) -> Finding:
        text = "the client sent a request after initialize without notifications/initialized"
        if late:
            text += f" (it came only later, seq {late})"
        return Finding(msgs=[late, request_seq] if late else [request_seq], message=text)

    def on_conversation_end(self, conversation: Conversation) -> Findings:
        state = self._state.pop(conversation.key, None)
        if state is None or state.pending is None or state.reported:
            return None
        return [self._finding(state.pending[0])]
