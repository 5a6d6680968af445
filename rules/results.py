"""Results and multi round-trip requests (modern): ``resultType``, ``InputRequiredResult``, retries.

In 2026-07-28 every result carries a ``resultType``: ``complete``,
``input_required`` (an ``InputRequiredResult`` asking the client for
input before it retries), or a value an advertised extension adds. Only
``tools/call``, ``prompts/get`` and ``resources/read`` may ask for input,
only with requests the client declared capabilities for, and the client's
retry is a new request (new id) that echoes ``requestState`` exactly.

A modern client talking to a legacy server is a documented outcome, not a
server bug: such a server may answer the client's modern request under its own
rules, without ``resultType``. So the checks on what a *modern server* must put
in every result (here and in :mod:`rules.meta`) wait until the server has shown
that it is modern (:class:`ServerSigns`); what they found before that is held,
a bounded few, and reported then.
"""

from __future__ import annotations

from collections import deque
from functools import lru_cache
from typing import Any

import msgspec

from inspector.analysis import Attempt, Conversation, Entry
from inspector.analysis.peek import id_key
from rules.base import MODERN_SPEC, Finding, Findings, Rule
from rules.context import MessageContext

BASIC = f"{MODERN_SPEC}/basic/index"
MRTR = f"{MODERN_SPEC}/basic/patterns/mrtr"

MCP = "io.modelcontextprotocol/"
SERVER_INFO = MCP + "serverInfo"
CLIENT_CAPABILITIES = MCP + "clientCapabilities"
CORE_RESULT_TYPES = frozenset({"complete", "input_required"})
MRTR_METHODS = frozenset({"tools/call", "prompts/get", "resources/read"})
INPUT_METHODS = frozenset({"elicitation/create", "sampling/createMessage", "roots/list"})
MODERN_ERROR_CODES = frozenset({-32020, -32021, -32022})
MODERN_ONLY_METHODS = frozenset({"server/discover", "subscriptions/listen"})
PENDING_LIMIT = 64
CACHE_MAX_BYTES = 16384
RESPONSES = frozenset({"result", "error"})


# -- shared helpers (rules.meta uses them too) ------------------------------------------
class _ParamsMeta(msgspec.Struct):
    meta: Any = msgspec.field(default=None, name="_meta")


class _RequestMeta(msgspec.Struct):
    params: _ParamsMeta | None = None


_REQUEST_META = msgspec.json.Decoder(_RequestMeta)


@lru_cache(maxsize=256)
def _meta_of(wire: bytes) -> dict[str, Any] | None:
    try:
        params = _REQUEST_META.decode(wire).params
    except msgspec.MsgspecError:
        return None
    if params is None or not isinstance(params.meta, dict):
        return None
    return params.meta


def request_meta(entry: Entry | None) -> dict[str, Any] | None:
    """``params._meta`` of a request entry (``None`` if absent or not an object); read-only."""
    if entry is None:
        return None
    wire = entry.wire()
    # several rules ask for the same request's _meta: cache the small ones
    return _meta_of(wire) if len(wire) <= CACHE_MAX_BYTES else _meta_of.__wrapped__(wire)


def shorten(value: Any, limit: int = 40) -> str:
    text = value if isinstance(value, str) else msgspec.json.encode(value).decode()
    text = repr(text) if isinstance(value, str) else text
    return text if len(text) <= limit else text[: limit - 1] + "…"


def shows_modern(ctx: MessageContext) -> bool:
    """Does this server response show that the server speaks the modern revision?"""
    if ctx.conversation.declared.supported_versions is not None:
        return True  # it answered server/discover
    if ctx.kind == "error":
        error = ctx.error
        code = error.get("code") if isinstance(error, dict) else None
        return type(code) is int and code in MODERN_ERROR_CODES
    if ctx.flow.method in MODERN_ONLY_METHODS:
        return True
    result = ctx.result
    if not isinstance(result, dict):
        return False
    if "resultType" in result or "cacheScope" in result or "ttlMs" in result:
        return True
    meta = result.get("_meta")
    return isinstance(meta, dict) and SERVER_INFO in meta


class ServerSigns:
    """Per conversation: has the server shown that it is modern? Holds findings until it has."""

    def __init__(self) -> None:
        self.modern: set[str] = set()
        self.pending: dict[str, deque[Finding]] = {}

    def report(self, ctx: MessageContext, finding: Finding | None) -> list[Finding]:
        """Observe a server response; what to report now (held findings released first)."""
        key = ctx.conversation.key
        if key not in self.modern and shows_modern(ctx):
            self.modern.add(key)
            released = list(self.pending.pop(key, ()))
            return [*released, finding] if finding is not None else released
        if finding is None:
            return []
        if key in self.modern:
            return [finding]
        held = self.pending.get(key)
        if held is None:
            held = self.pending[key] = deque(maxlen=PENDING_LIMIT)
        held.append(finding)
        return []

    def forget(self, key: str) -> None:
        self.modern.discard(key)
        self.pending.pop(key, None)


def server_response(ctx: MessageContext) -> bool:
    """A server's answer to a client request (not an orphan, nor a duplicate answer)."""
    if ctx.entry.dir != "s2c" or ctx.flow.sender != "c2s" or ctx.flow.orphan is not None:
        return False
    attempt = ctx.attempt
    return attempt is not None and attempt.response is ctx.entry


def describe(ctx: MessageContext) -> str:
    """``tools/call (id 4)``: the request a response answers."""
    return f"{ctx.method or '?'} (id {shorten(ctx.entry.id)})"


# -- resultType ---------------------------------------------------------------------------
class ResultTypeMissing(Rule):
    id = "result.result-type-missing"
    severity = "error"
    era = "modern"
    summary = "a result without `resultType` from a modern server"
    spec = f"{BASIC}#result-responses"
    kinds = RESPONSES

    def __init__(self) -> None:
        self.signs = ServerSigns()

    def on_message(self, ctx: MessageContext) -> Findings:
        if not server_response(ctx):
            return None
        finding = None
        if ctx.kind == "result":
            result = ctx.result
            if not isinstance(result, dict) or "resultType" not in result:
                finding = ctx.finding(f"result for {describe(ctx)} has no resultType")
        return self.signs.report(ctx, finding)

    def on_conversation_end(self, conversation: Conversation) -> Findings:
        self.signs.forget(conversation.key)
        return None


class ResultTypeUnknown(Rule):
    id = "result.result-type-unknown"
    severity = "error"
    era = "modern"
    summary = "`resultType` other than `complete`, `input_required` or an advertised extension's"
    spec = f"{BASIC}#resulttype"
    kinds = frozenset({"result"})

    def on_message(self, ctx: MessageContext) -> Findings:
        if not server_response(ctx):
            return None
        result = ctx.result
        if not isinstance(result, dict) or "resultType" not in result:
            return None
        value = result["resultType"]
        if not isinstance(value, str):
            return [ctx.finding(f"result for {describe(ctx)} has resultType {shorten(value)}")]
        if value in CORE_RESULT_TYPES:
            return None
        # Extensions MAY add values; which extension adds which is not known here,
        # so a value is let through when the request advertised any extension.
        if _advertised_extensions(ctx):
            return None
        return [
            ctx.finding(
                f"result for {describe(ctx)} has resultType {value!r}: not complete nor "
                "input_required, and the request advertised no extension"
            )
        ]


def _advertised_extensions(ctx: MessageContext) -> bool:
    caps = _capabilities(ctx)
    extensions = caps.get("extensions") if isinstance(caps, dict) else None
    return isinstance(extensions, dict) and bool(extensions)


def _capabilities(ctx: MessageContext) -> Any:
    """The ``clientCapabilities`` of the request this response answers (``None`` if absent)."""
    meta = request_meta(ctx.request)
    return meta.get(CLIENT_CAPABILITIES) if meta is not None else None


# -- InputRequiredResult -------------------------------------------------------------------
class _InputRequired(Rule):
    """Base: a server's ``input_required`` result."""

    era = "modern"
    kinds = frozenset({"result"})

    def on_message(self, ctx: MessageContext) -> Findings:
        if not server_response(ctx):
            return None
        result = ctx.result
        if not isinstance(result, dict) or result.get("resultType") != "input_required":
            return None
        return self.check(ctx, result)

    def check(self, ctx: MessageContext, result: dict[str, Any]) -> Findings:
        raise NotImplementedError

    @staticmethod
    def also(ctx: MessageContext) -> list[int]:
        request = ctx.request
        return [request.seq] if request is not None else []


class MethodNotAllowed(_InputRequired):
    id = "mrtr.method-not-allowed"
    severity = "error"
    summary = (
        "`input_required` in reply to a method other than tools/call, prompts/get, resources/read"
    )
    spec = f"{MRTR}#supported-requests"

    def check(self, ctx: MessageContext, result: dict[str, Any]) -> Findings:
        if ctx.method in MRTR_METHODS or ctx.method is None:
            return None
        return [
            ctx.finding(
                f"input_required result for {describe(ctx)}: only tools/call, prompts/get "
                "and resources/read may ask for input",
                also=self.also(ctx),
            )
        ]


class Empty(_InputRequired):
    id = "mrtr.empty"
    severity = "error"
    summary = "an `InputRequiredResult` with neither `inputRequests` nor `requestState`"
    spec = f"{MRTR}#server-requirements-basic-workflow"

    def check(self, ctx: MessageContext, result: dict[str, Any]) -> Findings:
        requests = result.get("inputRequests")
        if result.get("requestState") is not None or requests not in (None, {}):
            return None
        # An empty map asks for nothing: with no state either, the retry could only
        # repeat the original request.
        what = (
            "an empty inputRequests and no requestState"
            if requests == {}
            else "neither inputRequests nor requestState"
        )
        return [
            ctx.finding(
                f"input_required result for {describe(ctx)} has {what}",
                also=self.also(ctx),
            )
        ]


def _input_requests(result: dict[str, Any]) -> dict[str, Any]:
    requests = result.get("inputRequests")
    return requests if isinstance(requests, dict) else {}


class BadInputRequest(_InputRequired):
    id = "mrtr.bad-input-request"
    severity = "error"
    summary = (
        "an `inputRequests` value whose method is not elicitation/create, "
        "sampling/createMessage or roots/list"
    )
    spec = f"{MRTR}#server-requirements-basic-workflow"

    def check(self, ctx: MessageContext, result: dict[str, Any]) -> Findings:
        bad: list[str] = []
        for key, request in _input_requests(result).items():
            method = request.get("method") if isinstance(request, dict) else None
            if method is None:
                bad.append(f"{key!r} has no method")
            elif method not in INPUT_METHODS:
                bad.append(f"{key!r} is {shorten(method)}")
        if not bad:
            return None
        shown = "; ".join(bad[:5]) + ("; …" if len(bad) > 5 else "")
        return [
            ctx.finding(
                f"input_required result for {describe(ctx)}: inputRequests {shown} "
                "(allowed: elicitation/create, sampling/createMessage, roots/list)",
                also=self.also(ctx),
            )
        ]


def _missing_capability(request: dict[str, Any], caps: dict[str, Any]) -> str | None:
    """The capability an input request needs and ``caps`` lacks (``None``: declared)."""
    method = request.get("method")
    params = request.get("params")
    params = params if isinstance(params, dict) else {}
    if method == "roots/list":
        return None if isinstance(caps.get("roots"), dict) else "roots"
    if method == "sampling/createMessage":
        sampling = caps.get("sampling")
        if not isinstance(sampling, dict):
            return "sampling"
        if params.get("tools") is not None and not isinstance(sampling.get("tools"), dict):
            return "sampling.tools"
        return None
    if method == "elicitation/create":
        elicitation = caps.get("elicitation")
        if not isinstance(elicitation, dict):
            return "elicitation"
        mode = params.get("mode", "form")
        if mode == "url":
            return None if isinstance(elicitation.get("url"), dict) else "elicitation.url"
        if mode == "form":
            # an empty elicitation object means form mode (backwards compatibility)
            if not elicitation or isinstance(elicitation.get("form"), dict):
                return None
            return "elicitation.form"
    return None


class CapabilityNotDeclared(_InputRequired):
    id = "mrtr.capability-not-declared"
    severity = "error"
    summary = "an input request the client did not declare the capability for in that request"
    spec = f"{MRTR}#server-requirements-basic-workflow"

    def check(self, ctx: MessageContext, result: dict[str, Any]) -> Findings:
        requests = _input_requests(result)
        if not requests:
            return None
        caps = _capabilities(ctx)
        if not isinstance(caps, dict):
            return None  # no clientCapabilities at all: meta.malformed-accepted says so
        missing: list[str] = []
        for key, request in requests.items():
            if isinstance(request, dict):
                needed = _missing_capability(request, caps)
                if needed is not None:
                    missing.append(f"{key!r} ({request.get('method')}) needs {needed}")
        if not missing:
            return None
        shown = "; ".join(missing[:5]) + ("; …" if len(missing) > 5 else "")
        return [
            ctx.finding(
                f"input_required result for {describe(ctx)}: {shown}, which the request's "
                "clientCapabilities do not declare",
                also=self.also(ctx),
            )
        ]


# -- the client's retry ------------------------------------------------------------------
class _Retry(Rule):
    """Base: a client request that retries an ``input_required`` one (same flow)."""

    era = "modern"
    kinds = frozenset({"request"})
    methods = MRTR_METHODS

    def on_message(self, ctx: MessageContext) -> Findings:
        if ctx.entry.dir != "c2s":
            return None
        attempts = ctx.flow.attempts
        attempt = ctx.attempt
        if attempt is None or len(attempts) < 2 or attempt is attempts[0]:
            return None
        index = next(i for i, a in enumerate(attempts) if a is attempt)
        return self.check(ctx, attempt, attempts[:index])

    def check(self, ctx: MessageContext, attempt: Attempt, earlier: list[Attempt]) -> Findings:
        raise NotImplementedError


class RetrySameId(_Retry):
    id = "mrtr.retry-same-id"
    severity = "error"
    summary = "the retry of an `input_required` request reuses the original JSON-RPC id"
    spec = f"{MRTR}#client-requirements-basic-workflow"

    def check(self, ctx: MessageContext, attempt: Attempt, earlier: list[Attempt]) -> Findings:
        key = id_key(ctx.entry.id)
        for previous in earlier:
            if id_key(previous.request.id) == key:
                first = "original" if previous is earlier[0] else "earlier"
                return [
                    ctx.finding(
                        f"retry of {ctx.entry.method} reuses the {first} request's id "
                        f"{shorten(ctx.entry.id)} (a retry is a new request: new id)",
                        also=[previous.request.seq],
                    )
                ]
        return None


def _present(value: Any) -> bool:
    return value is not msgspec.UNSET and value is not None


class RequestStateModified(_Retry):
    id = "mrtr.request-state-modified"
    severity = "error"
    summary = "the retry's `requestState` differs from the one the server issued"
    spec = f"{MRTR}#client-requirements-basic-workflow"

    def check(self, ctx: MessageContext, attempt: Attempt, earlier: list[Attempt]) -> Findings:
        previous = earlier[-1]
        issued = previous.issued_state
        if not _present(issued) or attempt.request_state == issued:
            return None
        also = [previous.response.seq] if previous.response is not None else []
        sent = attempt.request_state
        what = "omits it" if not _present(sent) else f"carries {shorten(sent)}"
        return [
            ctx.finding(
                f"retry of {ctx.entry.method} (id {shorten(ctx.entry.id)}) must echo the "
                f"requestState {shorten(issued)} exactly, but {what}",
                also=also,
            )
        ]


class RequestStateUnsolicited(_Retry):
    id = "mrtr.request-state-unsolicited"
    severity = "error"
    summary = "the retry carries a `requestState` although the server issued none"
    spec = f"{MRTR}#client-requirements-basic-workflow"

    def check(self, ctx: MessageContext, attempt: Attempt, earlier: list[Attempt]) -> Findings:
        previous = earlier[-1]
        if _present(previous.issued_state) or not _present(attempt.request_state):
            return None
        also = [previous.response.seq] if previous.response is not None else []
        return [
            ctx.finding(
                f"retry of {ctx.entry.method} (id {shorten(ctx.entry.id)}) carries requestState "
                f"{shorten(attempt.request_state)} but the input_required result issued none",
                also=also,
            )
        ]
