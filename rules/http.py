"""Streamable HTTP rules: the headers, statuses and streams around the JSON-RPC messages.

The rules follow each HTTP exchange from its ``http`` records (``request``,
``response``, ``end``; headers lower-cased, in order) and the ``msg`` records
whose ``ch`` is the exchange id. The Analyzer holds a POST body back until the
response headers arrive, so when a rule sees the client's message it already
knows the status and response headers. The state of an exchange is dropped at
its ``end`` (and at most :data:`MAX_EXCHANGES` are kept open).

Era gating. The engine gates a rule's hooks on the conversation's era, but an
``http`` record reaches ``on_record`` with no conversation (its session is
known only from the response), so a rule declaring ``era = "modern"`` would
never see one. These rules therefore declare ``era = None`` to the engine and
gate themselves on ``catalog_era`` (the era RULES.md gives them): on the
message's era in ``on_message`` (which honours ``--spec``), and on the era
last seen for the exchange's conversation in ``on_record``.

Traffic of the deprecated HTTP+SSE transport (2024-11-05: a request POST
answered ``202``, the response arriving on a GET stream) is not judged by the
Streamable HTTP rules.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any, ClassVar

from inspector.analysis import Conversation
from inspector.jsonrpc import MessageDecoder
from inspector.records import Http, Msg, Record
from rules.base import LEGACY_SPEC, MODERN_SPEC, Era, Finding, Findings, Rule
from rules.context import MessageContext
from rules.tools import MAX_CONVERSATIONS, Lru, header_annotations, request_params, shown

STREAMABLE = f"{MODERN_SPEC}/basic/transports/streamable-http"
LEGACY_TRANSPORTS = f"{LEGACY_SPEC}/basic/transports"
MAX_EXCHANGES = 1024
MCP = "io.modelcontextprotocol/"
JSON = "application/json"
SSE = "text/event-stream"
ORIGIN = "http:origin"
NAME_METHODS = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
SENTINEL_PREFIX, SENTINEL_SUFFIX = "=?base64?", "?="
#: the MCP error codes a modern server can only send with 400 (and -32601 with 404)
STATUS_400 = frozenset({-32020, -32021, -32022})


class Exchange:
    """What a rule remembers of one HTTP exchange while it is open."""

    __slots__ = (
        "c2s",
        "conversation",
        "era",
        "has_request",
        "headers",
        "judged",
        "method",
        "path",
        "resp_headers",
        "resp_seq",
        "s2c",
        "seq",
        "status",
        "with_body",
        "x",
    )

    def __init__(self, record: Http) -> None:
        self.x = record.x
        self.seq = record.seq
        self.method = (record.method or "").upper()
        self.path = record.path
        self.headers = header_map(record.headers)
        self.resp_seq: int | None = None
        self.status: int | None = None
        self.resp_headers: dict[str, str] = {}
        self.with_body = False  # a non-JSON-RPC body was recorded
        self.s2c = 0  # JSON-RPC messages the server sent on this exchange
        self.c2s: list[int] = []  # client notifications/responses (seq), for the status rule
        self.has_request = False
        self.conversation: str | None = None
        self.era: str | None = None
        self.judged = False

    @property
    def session_key(self) -> str:
        """The conversation key the Analyzer gives this exchange."""
        session = self.headers.get("mcp-session-id") or self.resp_headers.get("mcp-session-id")
        return f"http:session:{session}" if session is not None else ORIGIN

    @property
    def content_type(self) -> str | None:
        value = self.resp_headers.get("content-type")
        return media_type(value) if value is not None else None

    @property
    def success(self) -> bool:
        return self.status is not None and 200 <= self.status < 300


def header_map(pairs: list[tuple[str, str]] | None) -> dict[str, str]:
    """Headers by lower-cased name; repeated fields joined with ``", "`` (RFC 9110)."""
    out: dict[str, str] = {}
    for name, value in pairs or ():
        key = name.lower()
        out[key] = f"{out[key]}, {value}" if key in out else value
    return out


def media_type(value: str) -> str:
    return value.split(";", 1)[0].strip().lower()


def what(ctx: MessageContext) -> str:
    """``tools/call (id 3)``, ``notifications/initialized``, ``a response (id 3)``."""
    ident = shown(ctx.entry.id, 40)
    if ctx.kind == "request":
        return f"{ctx.method} (id {ident})"
    if ctx.kind == "notification":
        return str(ctx.method)
    if ctx.is_response:
        return f"the response to {ctx.method} (id {ident})" if ctx.method else "a response"
    return "an invalid message"


def needs_encoding(value: str) -> bool:
    """A value that cannot travel as a plain header value (Value Encoding)."""
    if value != value.strip(" \t"):
        return True
    if value.startswith(SENTINEL_PREFIX) and value.endswith(SENTINEL_SUFFIX):
        return True
    return any(not (" " <= c <= "~" or c == "\t") for c in value)


def decode_header(value: str) -> tuple[str | None, bool]:
    """(decoded value or ``None`` if the Base64 is bad, whether it was sentinel-encoded)."""
    if (
        len(value) >= len(SENTINEL_PREFIX) + len(SENTINEL_SUFFIX)
        and value.startswith(SENTINEL_PREFIX)
        and value.endswith(SENTINEL_SUFFIX)
    ):
        payload = value[len(SENTINEL_PREFIX) : -len(SENTINEL_SUFFIX)]
        try:
            return base64.b64decode(payload, validate=True).decode("utf-8"), True
        except (binascii.Error, ValueError):
            return None, True
    return value, False


def header_mismatch(header: str, expected: str, *, number: float | None = None) -> str | None:
    """Why a mirrored header does not carry ``expected`` (``None`` when it does)."""
    decoded, encoded = decode_header(header)
    if decoded is None:
        return f"{shown(header, 80)} is not valid Base64 in the =?base64?…?= form"
    if decoded != expected:
        if number is not None and _number(decoded) == number:
            return None  # integers compare numerically (42 and 42.0)
        verb = "decodes to" if encoded else "is"
        return f"{verb} {shown(decoded, 80)}, the body has {shown(expected, 80)}"
    if not encoded and needs_encoding(expected):
        return f"carries {shown(expected, 80)} unencoded (it MUST use the =?base64?…?= form)"
    return None


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _has_body(record: Http) -> bool:
    return bool(record.body) or bool(record.body_b64)


def _modern_meta(params: Any) -> bool:
    meta = params.get("_meta") if isinstance(params, dict) else None
    version = meta.get(MCP + "protocolVersion") if isinstance(meta, dict) else None
    return isinstance(version, str) and version >= "2026-07-28"


class HttpRule(Rule):
    """Base of the Streamable HTTP rules: follows the exchanges, gates on ``catalog_era``."""

    #: the era RULES.md gives the rule (the engine cannot gate ``http`` records: see above)
    catalog_era: ClassVar[Era | None] = None
    transport = "http"
    record_types = frozenset({Http})

    def __init__(self) -> None:
        self.exchanges: Lru[str, Exchange] = Lru(MAX_EXCHANGES)
        self.eras: Lru[str, str | None] = Lru(MAX_CONVERSATIONS)
        self.endpoints: Lru[str, None] = Lru(16)  # paths that carried JSON-RPC POSTs
        self.old_sse = False  # HTTP+SSE (2024-11-05) traffic seen: not Streamable HTTP

    # -- following the exchanges -------------------------------------------------------
    def on_record(self, record: Record, conversation: Conversation | None) -> Findings:
        if isinstance(record, Http):
            if record.phase == "request":
                opened = Exchange(record)
                self.exchanges.put(record.x, opened)
                return self.on_http_request(opened)
            exchange = self.exchanges.get(record.x)
            if exchange is None:
                return None
            exchange.with_body = exchange.with_body or _has_body(record)
            if record.phase == "response":
                exchange.resp_seq = record.seq
                exchange.status = record.status
                exchange.resp_headers = header_map(record.headers)
                return self.on_http_response(exchange)
            if record.phase == "end":
                del self.exchanges[record.x]
                return self.on_http_end(exchange)
        elif isinstance(record, Msg) and record.dir == "s2c" and record.ch != "stdio":
            found = self.exchanges.get(record.ch)
            if found is not None:
                found.s2c += 1
        return None

    def on_message(self, ctx: MessageContext) -> Findings:
        exchange = self.exchanges.get(ctx.entry.ch)
        if exchange is None:
            return None
        self.eras.put(ctx.conversation.key, ctx.era)
        if ctx.entry.dir == "c2s":
            exchange.conversation = ctx.conversation.key
            exchange.era = ctx.era
            if ctx.kind == "request":
                exchange.has_request = True
                if exchange.status == 202 and exchange.s2c == 0:
                    self.old_sse = True  # the answer will come on another stream
            if exchange.method == "POST" and exchange.path is not None:
                self.endpoints.put(exchange.path, None)
        if self.old_sse or (ctx.version is not None and ctx.version < "2025-03-26"):
            return None
        if self.catalog_era is not None and ctx.era != self.catalog_era:
            return None
        return self.judge(ctx, exchange)

    def era_of(self, exchange: Exchange) -> str | None:
        """The era last seen in the exchange's conversation (for ``on_record`` judgments)."""
        if exchange.era is not None:
            return exchange.era
        key = exchange.session_key
        return self.eras.get(key) if key in self.eras else self.eras.get(ORIGIN)

    # -- what subclasses override -----------------------------------------------------
    def judge(self, ctx: MessageContext, exchange: Exchange) -> Findings:
        return None

    def on_http_request(self, exchange: Exchange) -> Findings:
        return None

    def on_http_response(self, exchange: Exchange) -> Findings:
        return None

    def on_http_end(self, exchange: Exchange) -> Findings:
        return None

    def first_post(self, ctx: MessageContext, exchange: Exchange) -> bool:
        """The first client message of a POST (a 2025-03-26 batch is judged once)."""
        if ctx.entry.dir != "c2s" or exchange.method != "POST" or exchange.judged:
            return False
        exchange.judged = True
        return True


class HttpAccept(HttpRule):
    id = "http.accept"
    severity = "error"
    summary = "a client POST whose Accept does not list both application/json and text/event-stream"
    spec = f"{STREAMABLE}#sending-messages"

    def judge(self, ctx: MessageContext, exchange: Exchange) -> Findings:
        if not self.first_post(ctx, exchange):
            return None
        accept = exchange.headers.get("accept")
        listed = {media_type(part) for part in (accept or "").split(",")}
        if JSON in listed and SSE in listed:
            return None
        header = "no Accept header" if accept is None else f"Accept {shown(accept, 80)}"
        return [
            ctx.finding(
                f"POST carrying {what(ctx)} has {header}; it must list both {JSON} and {SSE}",
                also=[exchange.seq],
            )
        ]


class HttpProtocolVersionHeader(HttpRule):
    id = "http.protocol-version-header"
    severity = "error"
    summary = "MCP-Protocol-Version header missing, or different from the body's version (modern)"
    spec = f"{STREAMABLE}#protocol-version-header"

    def __init__(self) -> None:
        super().__init__()
        self._negotiated: Lru[str, str] = Lru(MAX_CONVERSATIONS)

    def judge(self, ctx: MessageContext, exchange: Exchange) -> Findings:
        if ctx.entry.dir == "s2c":
            if ctx.method == "initialize" and ctx.kind == "result":
                result = ctx.result if isinstance(ctx.result, dict) else {}
                version = result.get("protocolVersion")
                if isinstance(version, str):
                    self._negotiated.put(ctx.conversation.key, version)
            return None
        header = exchange.headers.get("mcp-protocol-version")
        if ctx.era == "modern":
            # header rules for notification POSTs are not defined by 2026-07-28
            if ctx.kind != "request" or not self.first_post(ctx, exchange):
                return None
            if header is None:
                return [
                    ctx.finding(
                        f"POST carrying {what(ctx)} has no MCP-Protocol-Version header",
                        also=[exchange.seq],
                    )
                ]
            body = (ctx.meta or {}).get(MCP + "protocolVersion")
            if isinstance(body, str) and body != header:
                return [
                    ctx.finding(
                        f"MCP-Protocol-Version header {shown(header, 40)} differs from the "
                        f"body's {MCP}protocolVersion {shown(body, 40)} in {what(ctx)}",
                        also=[exchange.seq],
                    )
                ]
            return None
        negotiated = self._negotiated.get(ctx.conversation.key)
        if (
            negotiated is None
            or negotiated < "2025-06-18"
            or ctx.method == "initialize"
            or header is not None
            or not self.first_post(ctx, exchange)
        ):
            return None
        return [
            ctx.finding(
                f"POST carrying {what(ctx)} has no MCP-Protocol-Version header (required on "
                f"every request after initialize negotiated {negotiated})",
                also=[exchange.seq],
            )
        ]


class HttpMethodHeader(HttpRule):
    id = "http.method-header"
    severity = "error"
    catalog_era = "modern"
    summary = "on a request POST, Mcp-Method missing or different from the body's method"
    spec = f"{STREAMABLE}#standard-request-headers"

    def judge(self, ctx: MessageContext, exchange: Exchange) -> Findings:
        if ctx.kind != "request" or not self.first_post(ctx, exchange):
            return None
        header = exchange.headers.get("mcp-method")
        if header is None:
            problem = f"POST carrying {what(ctx)} has no Mcp-Method header"
        elif header != ctx.method:
            problem = (
                f"Mcp-Method header {shown(header, 60)} differs from the body's method "
                f"{shown(ctx.method, 60)} (id {shown(ctx.entry.id, 40)})"
            )
        else:
            return None
        return [ctx.finding(problem, also=[exchange.seq])]


class HttpNameHeader(HttpRule):
    id = "http.name-header"
    severity = "error"
    catalog_era = "modern"
    summary = "Mcp-Name missing on tools/call, resources/read, prompts/get, or not the body's name"
    spec = f"{STREAMABLE}#standard-request-headers"

    def judge(self, ctx: MessageContext, exchange: Exchange) -> Findings:
        member = NAME_METHODS.get(ctx.method or "")
        if ctx.kind != "request" or member is None or not self.first_post(ctx, exchange):
            return None
        params = ctx.params if isinstance(ctx.params, dict) else {}
        expected = params.get(member)
        if not isinstance(expected, str):
            return None  # no name to mirror: for the schema rules
        header = exchange.headers.get("mcp-name")
        if header is None:
            problem = f"POST carrying {what(ctx)} has no Mcp-Name header (params.{member})"
        else:
            mismatch = header_mismatch(header, expected)
            if mismatch is None:
                return None
            problem = f"Mcp-Name header of {what(ctx)} {mismatch}"
        return [ctx.finding(problem, also=[exchange.seq])]


_ABSENT = object()


def _argument(arguments: Any, chain: tuple[str, ...]) -> Any:
    value = arguments
    for step in chain:
        if not isinstance(value, dict) or step not in value:
            return _ABSENT
        value = value[step]
    return _ABSENT if value is None else value


def _header_text(value: Any) -> tuple[str, float | None] | None:
    """The header form of an argument (Value Encoding), and its number for integers."""
    if isinstance(value, bool):
        return ("true" if value else "false"), None
    if isinstance(value, int):
        return str(value), float(value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value)), value
    if isinstance(value, str):
        return value, None
    return None  # not a primitive: the arguments are wrong, not the header


class HttpParamHeader(HttpRule):
    id = "http.param-header"
    severity = "error"
    catalog_era = "modern"
    summary = "an Mcp-Param-* header missing or different from the argument its x-mcp-header names"
    spec = f"{STREAMABLE}#custom-headers-from-tool-parameters"

    def judge(self, ctx: MessageContext, exchange: Exchange) -> Findings:
        if ctx.method != "tools/call" or ctx.kind != "request":
            return None
        if not self.first_post(ctx, exchange):
            return None
        params = ctx.params if isinstance(ctx.params, dict) else {}
        name = params.get("name")
        tool = ctx.conversation.declared.tools.get(name) if isinstance(name, str) else None
        if not isinstance(tool, dict):
            return None
        annotations = header_annotations(tool.get("inputSchema"))
        if not annotations or any(a.problems for a in annotations):
            return None  # an invalid annotation makes the tool invalid: tools.x-mcp-header
        arguments = params.get("arguments", {})
        if not isinstance(arguments, dict):
            return None
        problems: list[str] = []
        for annotation in annotations:
            assert annotation.chain is not None  # no problems: statically reachable
            header_name = f"Mcp-Param-{annotation.name}"
            header = exchange.headers.get(header_name.lower())
            where = "arguments." + ".".join(annotation.chain)
            value = _argument(arguments, annotation.chain)
            if value is _ABSENT:
                if header is not None:
                    problems.append(f"{header_name} is sent but {where} is absent or null")
                continue
            text = _header_text(value)
            if text is None:
                continue
            if header is None:
                problems.append(f"{header_name} is missing ({where} is {shown(value, 60)})")
                continue
            mismatch = header_mismatch(header, text[0], number=text[1])
            if mismatch is not None:
                problems.append(f"{header_name} {mismatch}")
        if not problems:
            return None
        return [
            ctx.finding(
                f"tools/call {shown(name, 60)} (id {shown(ctx.entry.id, 40)}): "
                + "; ".join(problems),
                also=[exchange.seq],
            )
        ]


class HttpNotificationStatus(HttpRule):
    id = "http.notification-status"
    severity = "error"
    summary = "a notification POST not answered with 202 and an empty body (or an error status)"
    spec = f"{STREAMABLE}#sending-messages"

    def judge(self, ctx: MessageContext, exchange: Exchange) -> Findings:
        if ctx.entry.dir != "c2s" or exchange.method != "POST":
            return None
        # 2025-11-25 gives client responses the same treatment; 2026-07-28 forbids them
        if ctx.kind == "notification" or (ctx.is_response and ctx.era != "modern"):
            exchange.c2s.append(ctx.seq)
        return None

    def on_http_end(self, exchange: Exchange) -> Findings:
        if not exchange.c2s or exchange.has_request or exchange.status is None:
            return None
        if self.old_sse or exchange.resp_seq is None:
            return None
        status = exchange.status
        if status >= 400:
            return None  # the server could not accept it: any error status
        kind = "notification" if exchange.era == "modern" else "notification/response"
        if status != 202:
            problem = f"{kind} POST answered {status}; it MUST be 202 Accepted (or an error status)"
        elif exchange.s2c or exchange.with_body:
            problem = f"{kind} POST answered 202 with a body; it MUST have none"
        else:
            return None
        return [Finding(msgs=[*exchange.c2s, exchange.resp_seq], message=problem)]


class HttpContentType(HttpRule):
    id = "http.content-type"
    severity = "error"
    summary = "a request POST answered with neither application/json nor text/event-stream"
    spec = f"{STREAMABLE}#sending-messages"

    def judge(self, ctx: MessageContext, exchange: Exchange) -> Findings:
        if ctx.kind != "request" or exchange.status == 202 or not exchange.success:
            return None  # errors may carry any body; 202 to a request is HTTP+SSE's way
        if not self.first_post(ctx, exchange) or exchange.resp_seq is None:
            return None
        content_type = exchange.content_type
        if content_type in (JSON, SSE):
            return None
        shown_type = (
            "no Content-Type"
            if content_type is None
            else f"Content-Type {shown(exchange.resp_headers.get('content-type'), 60)}"
        )
        return [
            Finding(
                msgs=[exchange.seq, ctx.seq, exchange.resp_seq],
                message=f"{what(ctx)} answered {exchange.status} with {shown_type}; "
                f"it must be {JSON} or {SSE}",
            )
        ]


class HttpErrorStatus(HttpRule):
    id = "http.error-status"
    severity = "error"
    catalog_era = "modern"
    summary = "-32602 (missing _meta), -32020/-32021/-32022 not sent with 400; -32601 not with 404"
    spec = f"{STREAMABLE}#protocol-version-header"

    def __init__(self) -> None:
        super().__init__()
        self._decoder = MessageDecoder()
        self._modern: Lru[str, None] = Lru(MAX_CONVERSATIONS)  # servers that proved modern
        self._pending: Lru[str, list[Finding]] = Lru(MAX_CONVERSATIONS)

    def judge(self, ctx: MessageContext, exchange: Exchange) -> Findings:
        if ctx.entry.dir != "s2c" or not ctx.is_response:
            return None
        key = ctx.conversation.key
        if ctx.kind == "result":
            attempt = ctx.attempt
            if (attempt is not None and attempt.result_type is not None) or (
                ctx.method == "server/discover"
            ):
                return self._proven(key)
            return None
        error = ctx.error if isinstance(ctx.error, dict) else {}
        code = error.get("code")
        if not isinstance(code, int) or exchange.status is None or exchange.resp_seq is None:
            return None
        if code in STATUS_400:
            expected, why = 400, f"error {code}"
        elif code == -32601:
            expected, why = 404, "error -32601 (method not found)"
        elif code == -32602 and self._meta_missing(ctx):
            expected, why = 400, "error -32602 for a request missing required _meta"
        else:
            return None
        if exchange.status == expected:
            return None
        also = [ctx.request.seq] if ctx.request is not None else []
        finding = Finding(
            msgs=[*also, ctx.seq, exchange.resp_seq],
            message=f"{why} in reply to {ctx.method or 'a request'} (id "
            f"{shown(ctx.entry.id, 40)}) sent with HTTP {exchange.status}; it MUST be {expected}",
        )
        if code in STATUS_400:
            return [*(self._proven(key) or []), finding]
        if key in self._modern:
            return [finding]
        # A legacy server rejecting a dual-era client's probe looks the same: wait for proof.
        pending = self._pending.get(key) or []
        if len(pending) < 16:
            pending.append(finding)
        self._pending.put(key, pending)
        return None

    def _proven(self, key: str) -> list[Finding] | None:
        self._modern.put(key, None)
        return self._pending.pop(key, None)

    def _meta_missing(self, ctx: MessageContext) -> bool:
        if ctx.request is None:
            return False
        meta = request_params(ctx.request, self._decoder).get("_meta")
        if not isinstance(meta, dict):
            return True
        return MCP + "protocolVersion" not in meta or MCP + "clientCapabilities" not in meta


class HttpSseRequest(HttpRule):
    id = "http.sse-request"
    severity = "error"
    catalog_era = "modern"
    summary = "the server sends a JSON-RPC request on an SSE stream"
    spec = f"{STREAMABLE}#receiving-messages"

    def judge(self, ctx: MessageContext, exchange: Exchange) -> Findings:
        if ctx.entry.dir != "s2c" or ctx.kind != "request":
            return None
        stream = "SSE stream" if exchange.content_type == SSE else "response"
        return [
            ctx.finding(
                f"server sent the request {what(ctx)} on the {stream} of exchange {exchange.x}; "
                "a modern server embeds input requests in an InputRequiredResult instead",
                also=[exchange.seq],
            )
        ]


class HttpSessionId(HttpRule):
    id = "http.session-id"
    severity = "warning"
    catalog_era = "modern"
    summary = "the server mints or echoes Mcp-Session-Id in the modern era"
    spec = f"{STREAMABLE}#earlier-streamable-http-revisions"

    def __init__(self) -> None:
        super().__init__()
        self._reported: Lru[str, None] = Lru(MAX_CONVERSATIONS)

    def judge(self, ctx: MessageContext, exchange: Exchange) -> Findings:
        if ctx.kind != "request" or not exchange.success or exchange.resp_seq is None:
            return None
        session = exchange.resp_headers.get("mcp-session-id")
        key = ctx.conversation.key
        if session is None or key in self._reported or not self.first_post(ctx, exchange):
            return None
        self._reported.put(key, None)
        verb = "echoed" if exchange.headers.get("mcp-session-id") == session else "set"
        return [
            Finding(
                msgs=[ctx.seq, exchange.resp_seq],
                message=f"the server {verb} Mcp-Session-Id {shown(session, 60)} on the response "
                f"to {what(ctx)}; a modern server does not mint or echo session ids",
            )
        ]


class HttpGetStream(HttpRule):
    id = "http.get-stream"
    severity = "info"
    catalog_era = "modern"
    summary = "a GET/DELETE to the MCP endpoint (legacy client); the server SHOULD answer 405"
    spec = f"{STREAMABLE}#earlier-streamable-http-revisions"

    def __init__(self) -> None:
        super().__init__()
        self._reported: Lru[tuple[str, str, int | None], None] = Lru(64)

    def on_http_response(self, exchange: Exchange) -> Findings:
        if exchange.method not in ("GET", "DELETE") or exchange.path not in self.endpoints:
            return None
        if self.old_sse or self.era_of(exchange) != "modern" or exchange.resp_seq is None:
            return None
        key = (exchange.session_key, exchange.method, exchange.status)
        if key in self._reported:
            return None
        self._reported.put(key, None)
        request = f"{exchange.method} {exchange.path} (a legacy client"
        request += "'s standalone stream)" if exchange.method == "GET" else " ending its session)"
        if exchange.status == 405:
            message = f"{request} answered 405, as a modern server should"
        else:
            message = f"{request} answered {exchange.status}; a modern server SHOULD answer 405"
        return [Finding(msgs=[exchange.seq, exchange.resp_seq], message=message)]


class HttpSessionMissing(HttpRule):
    id = "http.session-missing"
    severity = "error"
    catalog_era = "legacy"
    summary = "after an initialize that returned Mcp-Session-Id, a client request without it"
    spec = f"{LEGACY_TRANSPORTS}#session-management"

    def __init__(self) -> None:
        super().__init__()
        self._sessions: Lru[str, int] = Lru(64)  # session id → seq of its initialize result

    def on_message(self, ctx: MessageContext) -> Findings:
        # Gated here rather than on the message's era: after a dual-era client's rejected
        # server/discover probe, the origin conversation (where a request that forgot its
        # session lands) still reads as modern while the session itself is legacy.
        exchange = self.exchanges.get(ctx.entry.ch)
        if exchange is None or ctx.version == "2024-11-05":
            return None
        if ctx.entry.dir == "s2c":
            session = exchange.resp_headers.get("mcp-session-id")
            if ctx.method == "initialize" and ctx.kind == "result" and session is not None:
                self._sessions.put(session, ctx.seq)
            return None
        if exchange.method == "POST" and exchange.path is not None:
            self.endpoints.put(exchange.path, None)
        if not self._sessions or "mcp-session-id" in exchange.headers:
            return None
        forced_modern = ctx.era == "modern" and ctx.conversation.era != "modern"
        if ctx.method == "initialize" or forced_modern or _modern_meta(ctx.params):
            return None
        if not self.first_post(ctx, exchange):
            return None
        session, seq = next(reversed(self._sessions.items()))
        return [
            ctx.finding(
                f"POST carrying {what(ctx)} has no Mcp-Session-Id header although initialize "
                f"returned session {shown(session, 60)}",
                also=[seq, exchange.seq],
            )
        ]

    def on_http_request(self, exchange: Exchange) -> Findings:
        if exchange.method not in ("GET", "DELETE") or not self._sessions:
            return None
        if "mcp-session-id" in exchange.headers or exchange.path not in self.endpoints:
            return None
        session, seq = next(reversed(self._sessions.items()))
        return [
            Finding(
                msgs=[seq, exchange.seq],
                message=f"{exchange.method} {exchange.path} has no Mcp-Session-Id header "
                f"although initialize returned session {shown(session, 60)}",
            )
        ]

    def on_http_response(self, exchange: Exchange) -> Findings:
        session = exchange.headers.get("mcp-session-id")
        if session is None or session not in self._sessions:
            return None
        ended = exchange.status == 404 or (exchange.method == "DELETE" and exchange.success)
        if ended:
            del self._sessions[session]  # terminated: a new initialize comes next
        return None


class HttpSseBuffering(HttpRule):
    id = "http.sse-buffering"
    severity = "warning"
    catalog_era = "modern"
    summary = "an SSE response without X-Accel-Buffering: no (reported once per server)"
    spec = f"{STREAMABLE}#receiving-messages"

    def __init__(self) -> None:
        super().__init__()
        self._reported = False

    def judge(self, ctx: MessageContext, exchange: Exchange) -> Findings:
        if self._reported or ctx.kind != "request" or exchange.content_type != SSE:
            return None
        if exchange.resp_seq is None or not self.first_post(ctx, exchange):
            return None
        buffering = exchange.resp_headers.get("x-accel-buffering")
        if buffering is not None and buffering.strip().lower() == "no":
            return None
        self._reported = True
        header = (
            "no X-Accel-Buffering header"
            if buffering is None
            else (f"X-Accel-Buffering {shown(buffering, 40)}")
        )
        return [
            Finding(
                msgs=[ctx.seq, exchange.resp_seq],
                message=f"the SSE response to {what(ctx)} has {header}; servers SHOULD send "
                "X-Accel-Buffering: no (reported once per server)",
            )
        ]
