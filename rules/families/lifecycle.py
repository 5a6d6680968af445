"""The legacy lifecycle (2025-11-25 and earlier): the ``initialize`` handshake.

The legacy era opens with an ``initialize`` handshake: ``initialize`` first,
its response, then ``notifications/initialized``; the negotiated version
holds for the session. A ``ping`` before ``initialize`` is allowed, and so is
a dual-era client's ``server/discover`` probe.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from typing import ClassVar

from mcpeek.inspector.analysis import Conversation
from mcpeek.inspector.records import Http, Record
from mcpeek.rules.base import LEGACY_SPEC, Era, Finding, Findings, Rule
from mcpeek.rules.context import MessageContext
from mcpeek.rules.families._wire import WINDOW, as_dict, side, where

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


class _Versions:
    __slots__ = ("listed", "listed_seq", "negotiated", "requested")

    def __init__(self) -> None:
        self.requested: str | None = None
        self.listed: list[str] | None = None  # what the server said it supports
        self.listed_seq = 0
        self.negotiated: str | None = None


class LifecycleVersionMismatch(Rule):
    """Gated by hand (era ``None``): it also reads the HTTP request records, which
    reach rules before their conversation (hence before any era) is known."""

    id = "lifecycle.version-mismatch"
    severity = "error"
    era = None  # legacy only, decided per message (see the class docstring)
    #: the era docs/rules.md gives the rule (the engine cannot gate it: see the docstring)
    catalog_era: ClassVar[Era] = "legacy"
    summary = "the `initialize` versions do not agree with what either side offered"
    spec = f"{LIFECYCLE}#version-negotiation"
    kinds = frozenset({"request", "result", "error"})
    directions: ClassVar[Mapping[str, str]] = {"request": "c2s", "result": "s2c", "error": "s2c"}
    message_eras = frozenset({"legacy"})  # (its HTTP records come before any era)

    record_types = frozenset({Http})

    def __init__(self) -> None:
        self._state: dict[str, _Versions] = {}
        self._headers: OrderedDict[str, str] = OrderedDict()  # HTTP exchange → version header

    def on_record(self, record: Record, conversation: Conversation | None) -> Findings:
        if not isinstance(record, Http):
            return None
        if record.phase == "end":
            self._headers.pop(record.x, None)
        elif record.phase == "request":
            for name, value in record.headers or ():
                if name.lower() == "mcp-protocol-version":
                    self._headers[record.x] = value
                    if len(self._headers) > WINDOW:
                        self._headers.popitem(last=False)
                    break
        return None

    def on_message(self, ctx: MessageContext) -> Findings:
        key = ctx.conversation.key
        method = ctx.method
        if ctx.kind == "request":
            if ctx.entry.dir != "c2s":
                return None
            if method == "initialize":
                state = self._state.setdefault(key, _Versions())
                params = as_dict(ctx.params)
                version = params.get("protocolVersion") if params else None
                state.requested = version if isinstance(version, str) else None
                return None
            return self._header(ctx, self._state.get(key))
        if method != "initialize" or ctx.entry.dir != "s2c":
            return None
        state = self._state.setdefault(key, _Versions())
        if ctx.kind == "error":
            error = as_dict(ctx.error)
            data = as_dict(error.get("data")) if error else None
            supported = data.get("supported") if data else None
            if isinstance(supported, list):
                state.listed = [v for v in supported if isinstance(v, str)]
                state.listed_seq = ctx.seq
            return None
        result = as_dict(ctx.result)
        answered = result.get("protocolVersion") if result else None
        if not isinstance(answered, str):
            return None  # schema.result says so
        state.negotiated = answered
        if state.listed is None:
            return None
        if answered not in state.listed:
            return [
                ctx.finding(
                    f"the server answered initialize with {answered}, not among the versions "
                    f"it listed as supported ({', '.join(state.listed)})",
                    also=[state.listed_seq],
                )
            ]
        requested = state.requested
        if requested is not None and requested in state.listed and answered != requested:
            return [
                ctx.finding(
                    f"the client asked for {requested}, which the server listed as supported, "
                    f"but the server answered {answered} (it MUST answer the same version)",
                    also=[state.listed_seq],
                )
            ]
        return None

    def _header(self, ctx: MessageContext, state: _Versions | None) -> Findings:
        header = self._headers.get(ctx.entry.ch)
        if state is None or state.negotiated is None or header is None:
            return None
        if ctx.conversation.shared_origin:
            # No session id: several clients may share the origin, and nothing ties
            # this request to the initialize seen (another client may have sent it).
            return None
        if header in (state.negotiated, state.requested):
            return None
        return [
            ctx.finding(
                f"{where(ctx)} carries MCP-Protocol-Version {header}, but the client asked for "
                f"{state.requested} and the server answered {state.negotiated}"
            )
        ]

    def on_conversation_end(self, conversation: Conversation) -> Findings:
        self._state.pop(conversation.key, None)
        return None
