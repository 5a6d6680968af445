"""Streamable HTTP responses: the status, content type and stream a server answers with.

A POST that carries only notifications (or, before 2026-07-28, client
responses) is answered ``202 Accepted`` with no body; one that carries a
request is answered with a JSON body or an SSE stream. A modern server sends
some errors with a fixed status (``400`` for -32020/-32021/-32022 and a
-32602 about missing ``_meta``, ``404`` for -32601), embeds its own requests
in an ``InputRequiredResult`` rather than sending them on the stream, and
asks proxies not to buffer the stream (``X-Accel-Buffering: no``).

How the rules follow the exchanges is in :mod:`mcpeek.rules.families._http_exchanges`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from mcpeek.rules.base import Finding, Findings
from mcpeek.rules.context import MessageContext
from mcpeek.rules.families._http_exchange_state import (
    FROM_CLIENT,
    JSON,
    MCP,
    SSE,
    STREAMABLE,
    Exchange,
)
from mcpeek.rules.families._http_exchanges import (
    HttpRule,
    described,
    what,
)
from mcpeek.rules.families._messages import request_params, shown

#: the MCP error codes a modern server can only send with 400 (and -32601 with 404)
STATUS_400 = frozenset({-32020, -32021, -32022})


class HttpNotificationStatus(HttpRule):
    id = "http.notification-status"
    head_gated = True  # (_http_quiet)
    severity = "error"
    summary = "a notification POST not answered with 202 and an empty body (or an error status)"
    spec = f"{STREAMABLE}#sending-messages"
    directions = FROM_CLIENT

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
        if self.tracker.old_sse or exchange.resp_seq is None:
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
    head_gated = True  # (_http_quiet)
    severity = "error"
    summary = "a request POST answered with neither application/json nor text/event-stream"
    spec = f"{STREAMABLE}#sending-messages"
    kinds = frozenset({"request"})
    directions = FROM_CLIENT

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
    kinds = frozenset({"error"})
    directions: ClassVar[Mapping[str, str]] = {"error": "s2c"}

    # A legacy server rejecting a dual-era client's probe looks the same: like every
    # modern-only finding on a server's message, the engine holds these until the
    # server shows it is modern (mcpeek.rules.held).
    def judge(self, ctx: MessageContext, exchange: Exchange) -> Findings:
        if ctx.entry.dir != "s2c" or ctx.kind != "error":
            return None
        error = ctx.error if isinstance(ctx.error, dict) else {}
        code = error.get("code")
        if not isinstance(code, int) or exchange.status is None or exchange.resp_seq is None:
            return None
        expected_why = self._expected(ctx, code)
        if expected_why is None:
            return None
        expected, why = expected_why
        if exchange.status == expected:
            return None
        also = [ctx.request.seq] if ctx.request is not None else []
        finding = Finding(
            msgs=[*also, ctx.seq, exchange.resp_seq],
            message=f"{why} in reply to {ctx.method or 'a request'} (id "
            f"{shown(ctx.entry.id, 40)}) sent with HTTP {exchange.status}; it MUST be {expected}",
        )
        return [finding]

    def _expected(self, ctx: MessageContext, code: int) -> tuple[int, str] | None:
        """The status an error ``code`` must come with, and how to name it."""
        if code in STATUS_400:
            return 400, f"error {code}"
        if code == -32601:
            return 404, "error -32601 (method not found)"
        if code == -32602 and self._meta_missing(ctx):
            return 400, "error -32602 for a request missing required _meta"
        return None

    def _meta_missing(self, ctx: MessageContext) -> bool:
        if ctx.request is None:
            return False
        meta = request_params(ctx).get("_meta")
        if not isinstance(meta, dict):
            return True
        return MCP + "protocolVersion" not in meta or MCP + "clientCapabilities" not in meta


class HttpSseRequest(HttpRule):
    id = "http.sse-request"
    severity = "error"
    catalog_era = "modern"
    summary = "the server sends a JSON-RPC request on an SSE stream"
    spec = f"{STREAMABLE}#receiving-messages"
    kinds = frozenset({"request"})
    directions: ClassVar[Mapping[str, str]] = {"request": "s2c"}

    def judge(self, ctx: MessageContext, exchange: Exchange) -> Findings:
        if ctx.entry.dir != "s2c" or ctx.kind != "request":
            return None
        stream = "SSE stream" if exchange.content_type == SSE else "response"
        return self.on_post(
            ctx,
            exchange,
            f"server sent the request {what(ctx)} on the {stream} of exchange {exchange.x}; "
            "a modern server embeds input requests in an InputRequiredResult instead",
        )


class HttpSseBuffering(HttpRule):
    id = "http.sse-buffering"
    head_gated = True  # (_http_quiet)
    severity = "warning"
    catalog_era = "modern"
    summary = "an SSE response without X-Accel-Buffering: no (reported once per server)"
    spec = f"{STREAMABLE}#receiving-messages"
    kinds = frozenset({"request"})
    directions = FROM_CLIENT

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
        return [
            Finding(
                msgs=[ctx.seq, exchange.resp_seq],
                message=f"the SSE response to {what(ctx)} has "
                f"{described('X-Accel-Buffering', buffering, 40)}; servers SHOULD send "
                "X-Accel-Buffering: no (reported once per server)",
            )
        ]
