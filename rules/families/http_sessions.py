"""Streamable HTTP sessions: ``Mcp-Session-Id`` and the legacy GET/DELETE requests.

Before 2026-07-28 a server could mint a session at ``initialize``
(``Mcp-Session-Id`` on the response); the client then sends it on every
request, opens a standalone stream with a GET and ends the session with a
DELETE to the MCP endpoint (the path its POSTs went to). A modern server
mints no session and echoes none, and answers a legacy client's GET or
DELETE with ``405``.

How the rules follow the exchanges is in :mod:`mcpeek.rules.families._http_exchanges`.
"""

from __future__ import annotations

from mcpeek.rules.base import Finding, Findings
from mcpeek.rules.context import MessageContext
from mcpeek.rules.families._bounded import MAX_CONVERSATIONS, Lru
from mcpeek.rules.families._http_exchange_state import (
    FROM_CLIENT,
    LEGACY_TRANSPORTS,
    STREAMABLE,
    Exchange,
)
from mcpeek.rules.families._http_exchanges import (
    HttpRule,
    post_without,
    what,
)
from mcpeek.rules.families._http_quiet import modern_meta
from mcpeek.rules.families._messages import shown


class HttpSessionId(HttpRule):
    id = "http.session-id"
    head_gated = True  # (_http_quiet)
    severity = "warning"
    catalog_era = "modern"
    summary = "the server mints or echoes Mcp-Session-Id in the modern era"
    spec = f"{STREAMABLE}#earlier-streamable-http-revisions"
    kinds = frozenset({"request"})
    directions = FROM_CLIENT

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
    quiet_head = True  # (_http_quiet.quiet_head)
    severity = "info"
    catalog_era = "modern"
    summary = "a GET/DELETE to the MCP endpoint (legacy client); the server SHOULD answer 405"
    spec = f"{STREAMABLE}#earlier-streamable-http-revisions"
    kinds = frozenset()  # judges the exchanges, not their messages

    def __init__(self) -> None:
        super().__init__()
        self._reported: Lru[tuple[str, str, int | None], None] = Lru(64)

    def on_http_response(self, exchange: Exchange) -> Findings:
        if exchange.method not in ("GET", "DELETE") or exchange.path not in self.tracker.endpoints:
            return None
        if (
            self.tracker.old_sse
            or self.tracker.era_of(exchange) != "modern"
            or exchange.resp_seq is None
        ):
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
    quiet_head = True  # (_http_quiet.quiet_head)
    severity = "error"
    catalog_era = "legacy"
    request_methods = frozenset({"GET", "DELETE"})  # (on_http_request)
    summary = "after an initialize that returned Mcp-Session-Id, a client request without it"
    spec = f"{LEGACY_TRANSPORTS}#session-management"

    def __init__(self) -> None:
        super().__init__()
        self._sessions: Lru[str, int] = Lru(64)  # session id → seq of its initialize result

    def heard(self, ctx: MessageContext, exchange: Exchange, passed: bool) -> Findings:
        # Gated here rather than on the message's era: after a dual-era client's rejected
        # server/discover probe, the origin conversation (where a request that forgot its
        # session lands) still reads as modern while the session itself is legacy.
        if ctx.version == "2024-11-05":
            return None
        if ctx.entry.dir == "s2c":
            session = exchange.resp_headers.get("mcp-session-id")
            if ctx.method == "initialize" and ctx.kind == "result" and session is not None:
                self._sessions.put(session, ctx.seq)
            return None
        if not self._sessions or "mcp-session-id" in exchange.headers:
            return None
        forced_modern = ctx.era == "modern" and ctx.conversation.era != "modern"
        if ctx.method == "initialize" or forced_modern or modern_meta(ctx.params):
            return None
        if not self.first_post(ctx, exchange):
            return None
        session, seq = self._latest()
        return [
            ctx.finding(
                post_without(ctx, "Mcp-Session-Id")
                + f" although initialize returned session {shown(session, 60)}",
                also=[seq, exchange.seq],
            )
        ]

    def on_http_request(self, exchange: Exchange) -> Findings:
        if exchange.method not in ("GET", "DELETE") or not self._sessions:
            return None
        if "mcp-session-id" in exchange.headers or exchange.path not in self.tracker.endpoints:
            return None
        session, seq = self._latest()
        return [
            Finding(
                msgs=[seq, exchange.seq],
                message=f"{exchange.method} {exchange.path} has no Mcp-Session-Id header "
                f"although initialize returned session {shown(session, 60)}",
            )
        ]

    def on_http_response(self, exchange: Exchange) -> Findings:
        if not self._sessions:
            return None  # no session to end (and the request headers stay unparsed)
        session = exchange.headers.get("mcp-session-id")
        if session is None or session not in self._sessions:
            return None
        ended = exchange.status == 404 or (exchange.method == "DELETE" and exchange.success)
        if ended:
            del self._sessions[session]  # terminated: a new initialize comes next
        return None

    def _latest(self) -> tuple[str, int]:
        """The session the last initialize returned, and the seq of that result."""
        return next(reversed(self._sessions.items()))


class HttpSessionTerminated(HttpRule):
    """2025-11-25 basic/transports, session management: "The server MAY terminate the
    session at any time, after which it MUST respond to requests containing that session
    ID with HTTP 404 Not Found". A session is known terminated once the client's DELETE
    of it was answered 2xx, or once the server answered 404 for it."""

    id = "http.session-terminated"
    quiet_head = True  # (_http_quiet.quiet_head)
    severity = "error"
    catalog_era = "legacy"
    summary = "a request with a terminated session id answered other than 404"
    spec = f"{LEGACY_TRANSPORTS}#session-management"
    kinds = frozenset()  # judges the exchanges, not their messages

    def __init__(self) -> None:
        super().__init__()
        self._ended: Lru[str, int] = Lru(MAX_CONVERSATIONS)  # session id → seq of its end

    def on_http_response(self, exchange: Exchange) -> Findings:
        session = exchange.headers.get("mcp-session-id")
        if session is None or exchange.status is None:
            return None
        ended = self._ended.get(session)
        if ended is not None and ended < exchange.seq and exchange.status != 404:
            return [
                Finding(
                    msgs=[ended, exchange.seq, exchange.resp_seq or exchange.seq],
                    message=f"{exchange.method} with session {shown(session, 60)}, terminated "
                    f"at seq {ended}, was answered {exchange.status} (it MUST be 404 Not Found)",
                )
            ]
        if ended is None and (
            exchange.status == 404 or (exchange.method == "DELETE" and exchange.success)
        ):
            self._ended.put(session, exchange.resp_seq or exchange.seq)
        return None
