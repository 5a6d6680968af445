"""Helpers for the rules on a modern server's answers (results, mrtr, meta).

A modern client talking to a legacy server is a documented outcome, not a
server bug: such a server may answer the client's modern request under its own
rules, without ``resultType``. The engine holds every modern-only finding on a
server's message until the server has shown it is modern (:mod:`mcpeek.rules.held`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import msgspec

from mcpeek.inspector.analysis.peek import (
    EMPTY_PARAMS,
    EMPTY_RESULT,
    ParamsPeek,
    ResultPeek,
    may_hold,
)
from mcpeek.rules.base import Finding, Findings, Rule
from mcpeek.rules.context import REQUEST_PARAMS_BIT, MessageContext

MCP = "io.modelcontextprotocol/"
SERVER_INFO = MCP + "serverInfo"
CLIENT_CAPABILITIES = MCP + "clientCapabilities"
MODERN_ERROR_CODES = frozenset({-32020, -32021, -32022})
MODERN_ONLY_METHODS = frozenset({"server/discover", "subscriptions/listen"})
PENDING_LIMIT = 64
UNSET: Any = msgspec.UNSET
RESPONSES = frozenset({"result", "error"})


def peeked_params(ctx: MessageContext) -> ParamsPeek | None:
    """The members of the message's ``params`` that correlation read (a progress token
    and value, a ``_meta``'s protocol fields…), during its hooks; ``None`` when it read
    none (no params, params that are not an object, an odd ``_meta``): then decode."""
    params = ctx.conversation.peeked.params
    return params if type(params) is ParamsPeek and params is not EMPTY_PARAMS else None


def peeked_result(ctx: MessageContext) -> ResultPeek | None:
    """Likewise the members of a result that correlation read (``tools``, ``resultType``…)."""
    result = ctx.conversation.peeked.result
    return result if type(result) is ResultPeek and result is not EMPTY_RESULT else None


def request_meta(ctx: MessageContext) -> dict[str, Any] | None:
    """``params._meta`` of the request a response answers (``None`` if absent or not an
    object); read-only, shared by every rule that asks."""
    params = ctx.request_params
    meta = params.get("_meta") if isinstance(params, dict) else None
    return meta if isinstance(meta, dict) else None


def request_cursor(ctx: MessageContext) -> Any:
    """The ``cursor`` param of the request a response answers (``None`` if absent);
    decoded only when the request's text may hold one."""
    request = ctx.request
    if request is not None and not may_hold(request.record, '"cursor"'):
        return None  # a first page (or forgotten bytes): no cursor
    params = ctx.request_params
    return params.get("cursor") if isinstance(params, dict) else None


def shorten(value: Any, limit: int = 40) -> str:
    text = value if isinstance(value, str) else msgspec.json.encode(value).decode()
    text = repr(text) if isinstance(value, str) else text
    return text if len(text) <= limit else text[: limit - 1] + "…"


class ModernServerRule(Rule):
    """Base: a check on a modern server's results. Until the server shows it is modern
    the engine holds what it finds (:mod:`mcpeek.rules.held`), as for every modern-only
    finding on a server's message."""

    era = "modern"
    kinds = frozenset({"result"})
    directions: ClassVar[Mapping[str, str]] = {"result": "s2c"}

    def on_message(self, ctx: MessageContext) -> Findings:
        if not server_response(ctx):
            return None
        finding = self.check(ctx)
        return [finding] if finding is not None else None

    def check(self, ctx: MessageContext) -> Finding | None:
        raise NotImplementedError


def server_response(ctx: MessageContext) -> bool:
    """A server's answer to a client request (not an orphan, nor a duplicate answer)."""
    if ctx.entry.dir != "s2c" or ctx.flow.sender != "c2s" or ctx.flow.orphan is not None:
        return False
    attempt = ctx.attempt
    return attempt is not None and attempt.response is ctx.entry


def describe(ctx: MessageContext) -> str:
    """``tools/call (id 4)``: the request a response answers."""
    return f"{ctx.method or '?'} (id {shorten(ctx.entry.id)})"


class MetaMemberPeek:
    """Reads just ``params._meta[key]`` of a message's text; everything else is skipped,
    not built (several times cheaper than decoding the params)."""

    def __init__(self, key: str) -> None:
        meta = msgspec.defstruct(
            "MetaPeek", [("value", Any, msgspec.field(default=None, name=key))], gc=False
        )
        params = msgspec.defstruct(
            "ParamsPeek", [("meta", meta | None, msgspec.field(default=None, name="_meta"))]
        )
        message = msgspec.defstruct("MessagePeek", [("params", params | None, None)])
        self._decoder: msgspec.json.Decoder[Any] = msgspec.json.Decoder(message)

    def read(self, raw: str) -> Any:
        """The member's value (``None`` when absent); :data:`UNREADABLE` when the text
        cannot be read this way (params or ``_meta`` not an object…)."""
        try:
            params = self._decoder.decode(raw).params
        except (msgspec.MsgspecError, UnicodeError, RecursionError):
            return UNREADABLE
        meta = params.meta if params is not None else None
        return meta.value if meta is not None else None


UNREADABLE: Any = object()
_CAPABILITIES = MetaMemberPeek(CLIENT_CAPABILITIES)


def request_capabilities(ctx: MessageContext) -> Any:
    """The ``clientCapabilities`` of the request this response answers (``None`` if absent)."""
    request = ctx.request
    raw = request.record.raw if request is not None else None
    if raw is not None and raw[:1] == "{" and not ctx.computed & REQUEST_PARAMS_BIT:
        # One object (not a batch) whose params nobody decoded for this response:
        # peek the one member. What the peek cannot read is left to the params below.
        capabilities = _CAPABILITIES.read(raw)
        if capabilities is not UNREADABLE:
            return capabilities
    meta = request_meta(ctx)
    return meta.get(CLIENT_CAPABILITIES) if meta is not None else None
