"""Peek into params and results for the few members correlation needs.

Correlation only needs a handful of members (``_meta`` protocol fields, the
progress token, a tool name, ``requestState``…). Each peek Struct names just
those, typed ``Any`` so that an odd value never fails the decode (the rules
judge types, not the correlator); every other member is skipped by msgspec
without being built. Decoders are built once per :class:`Peeker`.
"""

from __future__ import annotations

from typing import Any

import msgspec

from mcpeek.inspector.records import Msg

UNSET: Any = msgspec.UNSET
MCP = "io.modelcontextprotocol/"


class RequestMeta(msgspec.Struct, gc=False):
    protocol_version: Any = msgspec.field(default=UNSET, name=MCP + "protocolVersion")
    client_capabilities: Any = msgspec.field(default=UNSET, name=MCP + "clientCapabilities")
    client_info: Any = msgspec.field(default=UNSET, name=MCP + "clientInfo")
    log_level: Any = msgspec.field(default=UNSET, name=MCP + "logLevel")
    subscription_id: Any = msgspec.field(default=UNSET, name=MCP + "subscriptionId")
    progress_token: Any = msgspec.field(default=UNSET, name="progressToken")
    related_task: Any = msgspec.field(default=UNSET, name=MCP + "related-task")


class ParamsPeek(msgspec.Struct, gc=False):
    meta: RequestMeta | None = msgspec.field(default=None, name="_meta")
    name: Any = UNSET
    uri: Any = UNSET
    request_state: Any = msgspec.field(default=UNSET, name="requestState")
    input_responses: Any = msgspec.field(default=UNSET, name="inputResponses")
    # notifications/progress, notifications/cancelled
    progress_token: Any = msgspec.field(default=UNSET, name="progressToken")
    progress: Any = UNSET
    total: Any = UNSET
    request_id: Any = msgspec.field(default=UNSET, name="requestId")
    # initialize
    protocol_version: Any = msgspec.field(default=UNSET, name="protocolVersion")
    capabilities: Any = UNSET
    client_info: Any = msgspec.field(default=UNSET, name="clientInfo")
    # subscriptions/listen
    notifications: Any = UNSET


class ResultMeta(msgspec.Struct, gc=False):
    server_info: Any = msgspec.field(default=UNSET, name=MCP + "serverInfo")
    subscription_id: Any = msgspec.field(default=UNSET, name=MCP + "subscriptionId")


class ResultPeek(msgspec.Struct, gc=False):
    meta: ResultMeta | None = msgspec.field(default=None, name="_meta")
    result_type: Any = msgspec.field(default=UNSET, name="resultType")
    input_requests: Any = msgspec.field(default=UNSET, name="inputRequests")
    request_state: Any = msgspec.field(default=UNSET, name="requestState")
    # cache hints: only a modern server sends them
    ttl_ms: Any = msgspec.field(default=UNSET, name="ttlMs")
    cache_scope: Any = msgspec.field(default=UNSET, name="cacheScope")
    task: Any = UNSET  # CreateTaskResult (2025-11-25 tasks)
    # initialize / server/discover
    protocol_version: Any = msgspec.field(default=UNSET, name="protocolVersion")
    supported_versions: Any = msgspec.field(default=UNSET, name="supportedVersions")
    capabilities: Any = UNSET
    server_info: Any = msgspec.field(default=UNSET, name="serverInfo")
    instructions: Any = UNSET
    # tools/list
    tools: Any = UNSET
    next_cursor: Any = msgspec.field(default=UNSET, name="nextCursor")
    # tools/call: a tool that failed still answers with a result
    is_error: Any = msgspec.field(default=UNSET, name="isError")


class ErrorPeek(msgspec.Struct, gc=False):
    code: Any = UNSET
    message: Any = UNSET
    data: Any = UNSET


class PeekEnvelope(msgspec.Struct, gc=False):
    """A whole message decoded in one pass, payloads peeked (see :func:`classify`)."""

    jsonrpc: Any = UNSET
    id: Any = UNSET
    method: Any = UNSET
    params: ParamsPeek | msgspec.UnsetType | None = UNSET
    result: ResultPeek | msgspec.UnsetType | None = UNSET
    error: ErrorPeek | msgspec.UnsetType | None = UNSET

    @property
    def params_peek(self) -> ParamsPeek:
        return self.params if isinstance(self.params, ParamsPeek) else EMPTY_PARAMS

    @property
    def result_peek(self) -> ResultPeek:
        return self.result if isinstance(self.result, ResultPeek) else EMPTY_RESULT

    @property
    def error_peek(self) -> ErrorPeek:
        return self.error if isinstance(self.error, ErrorPeek) else EMPTY_ERROR


def may_hold(record: Msg, word: str) -> bool:
    """Whether a message's text may hold the JSON string ``word`` (as a member name or
    a value), so that only a decode can tell; ``False`` is certain, and costs no decode.

    In JSON text a string appears with its characters as they are, or escaped; a
    letter, digit, ``_``, ``-`` or ``.`` can only be escaped as ``\\uXXXX`` (``/``
    also as ``\\/``, so ``word`` must not hold one; it may be wrapped in the quotes
    that delimit a string). Text without ``word`` and without ``\\u`` cannot hold
    it. A message known only by its Base64 bytes may.
    """
    raw = record.raw
    if raw is None:
        return record.raw_b64 is not None
    # ("\\" first: a one-character look is a memchr, several times faster than the
    # two-character one, and most text holds no backslash at all)
    return word in raw or ("\\" in raw and "\\u" in raw)


EMPTY_PARAMS = ParamsPeek()
#: ``log_level_of`` a request whose params could not be peeked, in a text that may name
#: a level: only a careful decode of the request can tell.
UNREAD: Any = type("Unread", (), {"__repr__": lambda self: "UNREAD"})()


def log_level_of(params: ParamsPeek, record: Msg) -> Any:
    """Whether a request's ``_meta`` names a logLevel, as correlation read it: ``UNSET``
    (no), ``None`` (null), ``True`` (a level: a flag, as the value may be any JSON) or
    :data:`UNREAD` (odd params: a duplicate ``_meta``, not an object…)."""
    meta = params.meta
    if meta is not None:
        level = meta.log_level
        return level if level is UNSET or level is None else True
    if params is EMPTY_PARAMS and may_hold(record, "logLevel"):
        return UNREAD
    return UNSET


EMPTY_RESULT = ResultPeek()
EMPTY_ERROR = ErrorPeek()


class Peeker:
    def __init__(self) -> None:
        self._envelope = msgspec.json.Decoder(PeekEnvelope)
        self._params = msgspec.json.Decoder(ParamsPeek)
        self._result = msgspec.json.Decoder(ResultPeek)
        self._error = msgspec.json.Decoder(ErrorPeek)

    def envelope(self, data: str | bytes) -> PeekEnvelope | None:
        """The one-pass decode; ``None`` when the message needs the careful path
        (not an object, a batch, bad JSON, or a member of an unexpected type)."""
        try:
            return self._envelope.decode(data)
        except (msgspec.MsgspecError, RecursionError):
            return None

    def parts(
        self, params: msgspec.Raw | None, result: msgspec.Raw | None, error: msgspec.Raw | None
    ) -> PeekEnvelope:
        """Peek the raw members of a message decoded the careful way."""
        return PeekEnvelope(
            params=self.params(params), result=self.result(result), error=self.error(error)
        )

    def params(self, raw: msgspec.Raw | None) -> ParamsPeek:
        if raw is None:
            return EMPTY_PARAMS
        try:
            return self._params.decode(raw)
        except (msgspec.MsgspecError, RecursionError):  # not an object, or an odd _meta
            return EMPTY_PARAMS

    def result(self, raw: msgspec.Raw | None) -> ResultPeek:
        if raw is None:
            return EMPTY_RESULT
        try:
            return self._result.decode(raw)
        except (msgspec.MsgspecError, RecursionError):
            return EMPTY_RESULT

    def error(self, raw: msgspec.Raw | None) -> ErrorPeek:
        if raw is None:
            return EMPTY_ERROR
        try:
            return self._error.decode(raw)
        except (msgspec.MsgspecError, RecursionError):
            return EMPTY_ERROR


def id_key(value: Any) -> Any:
    """A hashable key that keeps JSON ids apart: ``1``, ``"1"``, ``1.0`` and ``true`` differ."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return ("float", value)
    if value is None:
        return ("null",)
    if value is UNSET:
        return ("absent",)
    try:
        return ("json", msgspec.json.encode(value))
    except RecursionError:  # nested too deep to compare: an id like no other
        return ("too deep", id(value))
