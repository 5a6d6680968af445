"""Request and result ``_meta``: per-request protocol fields, key names, trace context, logging.

In 2026-07-28 every client request carries its protocol version and client
capabilities (required) and its client identity (SHOULD) in ``_meta``; a
server rejects a request without the required fields with -32602, and names
itself in every result's ``_meta`` (SHOULD). ``_meta`` keys follow a
prefix/name format (both eras, since 2025-06-18); ``traceparent``,
``tracestate`` and ``baggage`` carry W3C values; log messages go only to
requests that set ``io.modelcontextprotocol/logLevel``.
"""

from __future__ import annotations

import functools
import re
from collections import OrderedDict
from typing import Any

from inspector.analysis import Attempt, Conversation, Entry, Flow
from rules.base import MODERN_SPEC, Finding, Findings, Rule
from rules.context import MessageContext
from rules.results import (
    CLIENT_CAPABILITIES,
    MCP,
    RESPONSES,
    SERVER_INFO,
    ServerSigns,
    describe,
    request_meta,
    server_response,
    shorten,
)

BASIC = f"{MODERN_SPEC}/basic/index"
LOGGING = f"{MODERN_SPEC}/server/utilities/logging"

PROTOCOL_VERSION = MCP + "protocolVersion"
CLIENT_INFO = MCP + "clientInfo"
LOG_LEVEL = MCP + "logLevel"
REQUIRED = (PROTOCOL_VERSION, CLIENT_CAPABILITIES)
KEY_FORMAT_SINCE = "2025-06-18"  # the first revision with _meta key-name rules


# -- per-request protocol fields ----------------------------------------------------------
class _RequestField(Rule):
    """Base: a client request without one of the per-request ``_meta`` fields.

    Checked on the request; a request sent before the conversation's era was
    known (a first ``server/discover`` without any field) is checked when the
    server's answer makes the conversation modern.
    """

    era = "modern"
    kinds = frozenset({"request", "result", "error"})
    key = ""
    need = ""

    def on_message(self, ctx: MessageContext) -> Findings:
        if ctx.kind == "request":
            if ctx.entry.dir != "c2s":
                return None
            message = self.missing(ctx.entry, ctx.entry.method, ctx.meta)
            return [ctx.finding(message)] if message else None
        if ctx.flow.era is not None or not server_response(ctx) or ctx.request is None:
            return None
        request = ctx.request
        message = self.missing(request, ctx.method, request_meta(request))
        return [Finding(msgs=[request.seq], message=message)] if message else None

    def missing(
        self, request: Entry, method: str | None, meta: dict[str, Any] | None
    ) -> str | None:
        if meta is not None and meta.get(self.key) is not None:
            return None
        where = "no _meta" if meta is None else f'no _meta["{self.key}"]'
        return f"{method} request (id {shorten(request.id)}) has {where} ({self.need})"


class ProtocolVersionMissing(_RequestField):
    id = "meta.protocol-version-missing"
    severity = "error"
    summary = "a request without `io.modelcontextprotocol/protocolVersion`"
    spec = f"{BASIC}#meta"
    key = PROTOCOL_VERSION
    need = "required on every request"


class ClientCapabilitiesMissing(_RequestField):
    id = "meta.client-capabilities-missing"
    severity = "error"
    summary = "a request without `io.modelcontextprotocol/clientCapabilities`"
    spec = f"{BASIC}#meta"
    key = CLIENT_CAPABILITIES
    need = "required on every request; {} declares none"


class ClientInfoMissing(_RequestField):
    id = "meta.client-info-missing"
    severity = "warning"
    summary = "a request without `io.modelcontextprotocol/clientInfo`"
    spec = f"{BASIC}#meta"
    key = CLIENT_INFO
    need = "clients SHOULD send it on every request"


# -- what the server answers --------------------------------------------------------------
class _ModernServerRule(Rule):
    """Base: a check on a modern server's results, held until the server shows it is modern."""

    era = "modern"
    kinds = RESPONSES

    def __init__(self) -> None:
        self.signs = ServerSigns()

    def on_message(self, ctx: MessageContext) -> Findings:
        if not server_response(ctx):
            return None
        finding = self.check(ctx) if ctx.kind == "result" else None
        return self.signs.report(ctx, finding)

    def check(self, ctx: MessageContext) -> Finding | None:
        raise NotImplementedError

    def on_conversation_end(self, conversation: Conversation) -> Findings:
        self.signs.forget(conversation.key)
        return None


class ServerInfoMissing(_ModernServerRule):
    id = "meta.server-info-missing"
    severity = "warning"
    summary = "a result without `io.modelcontextprotocol/serverInfo`"
    spec = f"{BASIC}#meta"

    def check(self, ctx: MessageContext) -> Finding | None:
        result = ctx.result
        meta = result.get("_meta") if isinstance(result, dict) else None
        if isinstance(meta, dict) and meta.get(SERVER_INFO) is not None:
            return None
        return ctx.finding(
            f'result for {describe(ctx)} has no _meta["{SERVER_INFO}"] '
            "(servers SHOULD name themselves in every result)"
        )


class MalformedAccepted(_ModernServerRule):
    id = "meta.malformed-accepted"
    severity = "error"
    summary = "a result to a request that lacked a required `_meta` field (MUST be -32602)"
    spec = f"{BASIC}#meta"

    def check(self, ctx: MessageContext) -> Finding | None:
        request = ctx.request
        if request is None or request.dir != "c2s":
            return None
        meta = request_meta(request) or {}
        missing = [key.removeprefix(MCP) for key in REQUIRED if meta.get(key) is None]
        if not missing:
            return None
        return ctx.finding(
            f"result for {describe(ctx)} although the request lacks {' and '.join(missing)} "
            "in _meta (the server MUST reject it with -32602)",
            also=[request.seq],
        )


# -- _meta key names (both eras) ----------------------------------------------------------
_LABEL = r"[A-Za-z](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
_LABEL_RE = re.compile(_LABEL)
_NAME_RE = re.compile(r"(?:[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)?")
_KEY_RE = re.compile(
    rf"(?:{_LABEL}(?:\.{_LABEL})*/)?(?:[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)?"
)
#: Members whose values are free-form JSON (tool arguments, schemas, log data,
#: capability settings): a ``_meta`` inside them is not MCP's.
FREE_FORM = frozenset(
    {
        "arguments",
        "structuredContent",
        "inputSchema",
        "outputSchema",
        "requestedSchema",
        "data",
        "input",
        "metadata",
        "capabilities",
        "experimental",
        "extensions",
    }
)
MAX_DEPTH = 48
MAX_BAD = 5

Path = tuple[Any, ...] | None  # (parent path, member) links, rendered only on a hit


@functools.lru_cache(maxsize=4096)  # the same few keys come in every message
def key_problem(key: str) -> str | None:
    """Why ``key`` is not a valid ``_meta`` key name (``None``: it is)."""
    if _KEY_RE.fullmatch(key):
        return None
    prefix, slash, name = key.rpartition("/")
    if slash:
        if "/" in prefix:
            return "more than one '/'"
        for label in prefix.split("."):
            if not _LABEL_RE.fullmatch(label):
                return (
                    f"prefix label {label!r} must start with a letter, end with a letter or "
                    "digit, and hold only letters, digits and '-'"
                )
    if not _NAME_RE.fullmatch(name):
        return "name must start and end with a letter or digit, with only [A-Za-z0-9._-] inside"
    return "not a valid key"  # pragma: no cover - the cases above are exhaustive


def _render(path: Path) -> str:
    parts: list[str] = []
    while path is not None:
        path, member = path
        parts.append(f"[{member}]" if isinstance(member, int) else f".{member}")
    text = "".join(reversed(parts))
    return text[1:] if text.startswith(".") else text


def _bad_keys(value: Any, path: Path, out: list[tuple[str, str, str]], depth: int) -> None:
    if depth > MAX_DEPTH or len(out) > MAX_BAD:
        return
    if isinstance(value, dict):
        for member, item in value.items():
            if member == "_meta":
                if isinstance(item, dict):
                    for key in item:
                        if not isinstance(key, str):
                            continue
                        problem = key_problem(key)
                        if problem is not None:
                            out.append((_render((path, "_meta")), key, problem))
            elif member not in FREE_FORM and isinstance(item, dict | list):
                _bad_keys(item, (path, member), out, depth + 1)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            if isinstance(item, dict | list):
                _bad_keys(item, (path, index), out, depth + 1)


class KeyFormat(Rule):
    id = "meta.key-format"
    severity = "error"
    summary = "a `_meta` key that breaks the prefix/name rules"
    spec = f"{BASIC}#meta"
    kinds = frozenset({"request", "notification", "result"})

    def on_message(self, ctx: MessageContext) -> Findings:
        if ctx.version is not None and ctx.version < KEY_FORMAT_SINCE:
            return None  # 2024-11-05 and 2025-03-26 had no key-name rules
        text = ctx.entry.record.raw
        occurrences = text.count('"_meta"') if text is not None else -1
        if occurrences == 0:
            return None  # spares the decode (a JSON escape in a key is not worth it)
        if ctx.kind == "result":
            body, root = ctx.result, "result"
        else:
            body, root = ctx.params, "params"
        if not isinstance(body, dict):
            return None
        bad: list[tuple[str, str, str]] = []
        top = body.get("_meta")
        if occurrences == 1 and isinstance(top, dict):
            # The usual message: one _meta, at the top; no need to walk the payload.
            _bad_keys({"_meta": top}, (None, root), bad, 0)
        else:
            _bad_keys(body, (None, root), bad, 0)
        if not bad:
            return None
        where, key, problem = bad[0]
        more = f" (and {len(bad) - 1} more)" if len(bad) > 1 else ""
        return [ctx.finding(f"_meta key {key!r} at {where}: {problem}{more}")]


# -- W3C trace context --------------------------------------------------------------------
_HEX = "[0-9a-f]"
_TRACEPARENT_RE = re.compile(rf"({_HEX}{{2}})-({_HEX}{{32}})-({_HEX}{{16}})-({_HEX}{{2}})(-.*)?")
_TS_KEY = r"(?:[a-z0-9][a-z0-9_\-*/]{0,255}|[a-z0-9][a-z0-9_\-*/]{0,240}@[a-z][a-z0-9_\-*/]{0,13})"
_TS_VALUE = r"[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]"
_TS_MEMBER_RE = re.compile(rf"{_TS_KEY}={_TS_VALUE}")
_TOKEN = r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+"
_BAGGAGE_VALUE = r"[\x21\x23-\x2b\x2d-\x3a\x3c-\x5b\x5d-\x7e]*"
_OWS = r"[ \t]*"
_BAGGAGE_MEMBER_RE = re.compile(
    rf"{_OWS}{_TOKEN}{_OWS}={_OWS}{_BAGGAGE_VALUE}"
    rf"(?:{_OWS};{_OWS}{_TOKEN}(?:{_OWS}={_OWS}{_BAGGAGE_VALUE})?)*{_OWS}"
)
TRACESTATE_MAX = 32
BAGGAGE_MAX = 180


def traceparent_problem(value: str) -> str | None:
    match = _TRACEPARENT_RE.fullmatch(value)
    if match is None:
        return "not version-traceid-parentid-flags in lower-case hex (2-32-16-2)"
    version, trace_id, parent_id, _, rest = match.groups()
    if version == "ff":
        return "version ff is invalid"
    if version == "00" and rest is not None:
        return "version 00 has exactly four fields"
    if trace_id == "0" * 32:
        return "trace-id is all zeros"
    if parent_id == "0" * 16:
        return "parent-id is all zeros"
    return None


def tracestate_problem(value: str) -> str | None:
    members = [m.strip(" \t") for m in value.split(",")]
    members = [m for m in members if m]
    if len(members) > TRACESTATE_MAX:
        return f"{len(members)} list-members (at most {TRACESTATE_MAX})"
    for member in members:
        if not _TS_MEMBER_RE.fullmatch(member):
            return f"list-member {shorten(member)} is not key=value"
    return None


def baggage_problem(value: str) -> str | None:
    members = value.split(",")
    if len(members) > BAGGAGE_MAX:
        return f"{len(members)} list-members (at most {BAGGAGE_MAX})"
    for member in members:
        if not _BAGGAGE_MEMBER_RE.fullmatch(member):
            return f"list-member {shorten(member)} is not key=value[;property]"
    return None


TRACE_CHECKS = {
    "traceparent": traceparent_problem,
    "tracestate": tracestate_problem,
    "baggage": baggage_problem,
}


class TraceContext(Rule):
    id = "meta.trace-context"
    severity = "error"
    era = "modern"
    summary = "`traceparent` / `tracestate` / `baggage` in `_meta` not in W3C format"
    spec = f"{BASIC}#meta"
    kinds = frozenset({"request", "notification", "result"})

    def on_message(self, ctx: MessageContext) -> Findings:
        wire = ctx.wire
        if (
            b'"traceparent"' not in wire
            and b'"tracestate"' not in wire
            and b'"baggage"' not in wire
        ):
            return None  # spares the decode
        meta = ctx.meta
        if meta is None:
            return None
        out: list[Finding] = []
        for key, check in TRACE_CHECKS.items():
            if key not in meta:
                continue
            value = meta[key]
            problem = check(value) if isinstance(value, str) else "not a string"
            if problem is not None:
                out.append(ctx.finding(f"_meta {key} {shorten(value)}: {problem}"))
        return out


# -- logging ------------------------------------------------------------------------------
RECENT_LOOKBACK = 16
IN_FLIGHT_LOOKUP = 64
LEVELS_LIMIT = 4096


def _owner(flow: Flow, entry: Entry) -> Attempt:
    """The attempt of an MRTR chain a log message belongs to (its HTTP stream, or the last)."""
    if entry.ch != "stdio":
        for attempt in reversed(flow.attempts):
            if attempt.request.ch == entry.ch:
                return attempt
    return flow.attempts[-1]


class LogWithoutLevel(Rule):
    """A log message goes only to a request that set a log level.

    Whether a request set one is noted as it goes by (by seq, a bounded window):
    once a flow has ended, a streaming analyzer forgets its bytes, and a log
    message may come late (an HTTP stream, or stdio after the answer).
    """

    id = "meta.log-without-level"
    severity = "error"
    era = "modern"
    summary = (
        "`notifications/message` for a request that carried no `io.modelcontextprotocol/logLevel`"
    )
    spec = f"{LOGGING}#per-request-log-level"
    kinds = frozenset({"request", "notification"})

    def __init__(self) -> None:
        self.levels: dict[str, OrderedDict[int, bool]] = {}

    def on_message(self, ctx: MessageContext) -> Findings:
        if ctx.kind == "request":
            if ctx.entry.dir == "c2s":
                self._note(ctx.conversation.key, ctx.entry.seq, ctx.meta)
            return None
        if ctx.entry.method != "notifications/message" or ctx.entry.dir != "s2c":
            return None
        flow = ctx.flow
        if flow.method == "subscriptions/listen":
            return None  # subscription.request-scoped says so
        if flow.orphan is None and flow.sender == "c2s" and flow.attempts:
            attempt = _owner(flow, ctx.entry)
            if self._level(ctx.conversation.key, attempt.request) is not False:
                return None
            return [
                ctx.finding(
                    f"log message for {flow.method} (id {shorten(attempt.request.id)}), "
                    f"whose request set no {LOG_LEVEL}",
                    also=[attempt.request.seq],
                )
            ]
        return self._unattributed(ctx)

    def _note(self, key: str, seq: int, meta: dict[str, Any] | None) -> None:
        levels = self.levels.get(key)
        if levels is None:
            levels = self.levels[key] = OrderedDict()
        levels[seq] = meta is not None and meta.get(LOG_LEVEL) is not None
        if len(levels) > LEVELS_LIMIT:
            levels.popitem(last=False)

    def _level(self, key: str, request: Entry) -> bool | None:
        """Did ``request`` set a log level? ``None``: not known any more."""
        levels = self.levels.get(key)
        return levels.get(request.seq) if levels is not None else None

    def _unattributed(self, ctx: MessageContext) -> Findings:
        conversation = ctx.conversation
        key = conversation.key
        in_flight = [
            attempt
            for (side, _), (flow, attempt) in conversation.in_flight.items()
            if side == "c2s" and flow.method != "subscriptions/listen"
        ]
        if in_flight:
            if any(self._level(key, a.request) is not False for a in in_flight[:IN_FLIGHT_LOOKUP]):
                return None  # it may belong to one of them
            return [
                ctx.finding(
                    f"log message while none of the {len(in_flight)} requests in flight "
                    f"set {LOG_LEVEL}"
                )
            ]
        for looked, ((side, _), (flow, attempt)) in enumerate(
            reversed(conversation.recent.items())
        ):
            if looked >= RECENT_LOOKBACK:
                break
            if side == "c2s" and flow.method != "subscriptions/listen":
                if self._level(key, attempt.request) is not False:
                    return None  # late, but for a request that asked for logs
                break
        return [ctx.finding(f"log message with no request in flight that set {LOG_LEVEL}")]

    def on_conversation_end(self, conversation: Conversation) -> Findings:
        self.levels.pop(conversation.key, None)
        return None
