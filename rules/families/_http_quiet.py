"""The response head of a conformant POST: proof that the header rules have nothing to say.

When a response head comes, the client messages that waited for it are judged
by every ``http.*`` rule that judges client messages (a dozen of them: most of
the HTTP rules' cost per exchange). Most exchanges are one request POSTed with
the headers it should carry and answered with a JSON body or an SSE stream.
:func:`quiet` checks that case in one pass over what those rules read; when it
passes, the tracker lets the engine call only the rules that also judge the
response head itself (``on_http_response``), as on a head that nobody waited
for. It must be sound: it passes only where every rule it stands for
(``HttpRule.head_gated``) would find nothing, and it does what they would
have done meanwhile. The only such effect is :meth:`HttpRule.first_post`'s
mark on the exchange (a later client message on the same POST is not its
first), so it marks the exchange for each rule that would have reached that
call. The rules' other state is untouched on this case: ``http.accept`` only
caches a good ``Accept``, ``http.sse-buffering`` and ``http.session-id`` change
theirs only when they report, and ``http.notification-status`` keeps only
notifications and responses.

The verifying engine's twin runs without it (:meth:`HttpRule.ungate`), so every
rule test compares the rules' findings with and without it.
"""

from __future__ import annotations

import itertools
from typing import Any

from mcpeek.rules.context import MessageContext
from mcpeek.rules.families._http_exchange_state import (
    JSON,
    MCP,
    NAME_METHODS,
    SSE,
    Exchange,
    media_type,
)
from mcpeek.rules.families._http_kept import declared_tool
from mcpeek.rules.families._http_values import SENTINEL_PREFIX, header_mismatch, needs_encoding
from mcpeek.rules.families._toolschema import header_annotations

# The ids of the rules whose first_post() the check stands in for (their ``judge``).
ACCEPT = "http.accept"
VERSION = "http.protocol-version-header"
METHOD = "http.method-header"
NAME = "http.name-header"
PARAM = "http.param-header"
CONTENT_TYPE = "http.content-type"
BUFFERING = "http.sse-buffering"
VERSION_KEY = MCP + "protocolVersion"


class Accepts:
    """The last ``Accept`` value that listed both media types (clients repeat theirs)."""

    __slots__ = ("good",)

    def __init__(self) -> None:
        self.good: str | None = None

    def both(self, accept: str | None) -> bool:
        if accept is None:
            return False
        if accept == self.good:
            return True
        listed = {media_type(part) for part in accept.split(",")}
        if JSON in listed and SSE in listed:
            self.good = accept
            return True
        return False


def quiet(exchange: Exchange, ctx: MessageContext, passed: bool, accepts: Accepts) -> bool:
    """Whether no ``head_gated`` rule can find anything on ``ctx``, the one client
    message that waited for ``exchange``'s response head (just come); if so, the
    exchange is marked as those rules would have marked it."""
    version = ctx.version
    if not passed or (version is not None and version < "2025-03-26"):
        return True  # HttpRule.heard: no rule judges it (and none marks anything)
    if ctx.kind != "request" or exchange.method != "POST" or exchange.judged:
        return False  # (a notification is counted by http.notification-status)
    headers = exchange.headers
    accept = headers.get("accept")
    if accept is None or (accept != accepts.good and not accepts.both(accept)):
        return False
    status = exchange.status
    answered = status is not None and 200 <= status < 300  # (Exchange.success)
    content_type = exchange.content_type
    typed = answered and status != 202  # (http.content-type judges its media type)
    if typed and content_type not in (JSON, SSE):
        return False
    header = headers.get("mcp-protocol-version")
    if ctx.era != "modern":  # (the modern-only rules do not judge it)
        # http.protocol-version-header: with the header, silent before its first_post
        # (without it, whether it reports depends on the version it saw negotiated)
        if header is None:
            return False
        exchange.judged.update(_LEGACY_MARKS[typed])
        return True
    if answered and "mcp-session-id" in exchange.resp_headers:
        return False  # http.session-id: whether it reports depends on its memory
    method = ctx.method
    if header is None or headers.get("mcp-method") != method:
        return False
    body = (ctx.meta or {}).get(VERSION_KEY)
    if isinstance(body, str) and body != header:
        return False
    params = ctx.params
    if not isinstance(params, dict):
        params = {}
    member = NAME_METHODS.get(method or "")
    if member is not None:
        expected = params.get(member)
        if isinstance(expected, str):
            name = headers.get("mcp-name")
            if name is None:
                return False
            # (the header as the body has it, plain, and a value that needs no encoding:
            # no mismatch, known without decoding it)
            plain = name == expected and not name.startswith(SENTINEL_PREFIX)
            unsure = not plain or needs_encoding(expected)
            if unsure and header_mismatch(name, expected) is not None:
                return False
    call = method == "tools/call"
    if call:
        tool_name = params.get("name")
        tool = declared_tool(ctx, tool_name) if isinstance(tool_name, str) else None
        if isinstance(tool, dict) and _annotated(tool):
            return False  # its Mcp-Param-* headers: left to http.param-header
    stream = content_type == SSE
    if stream:
        # (marked even when the rule already reported: it then never looks again)
        buffering = exchange.resp_headers.get("x-accel-buffering")
        if buffering is None or buffering.strip().lower() != "no":
            return False
    exchange.judged.update(_MODERN_MARKS[typed, member is not None, call, stream])
    return True


def quiet_head(exchange: Exchange, ctx: MessageContext) -> bool:
    """After :func:`quiet` passed: whether the rules that judge the head itself and
    vouch for this (``HttpRule.quiet_head``) have nothing to do on it either, nor on
    ``ctx``: a POST (http.get-stream judges GET and DELETE) whose request names no
    session (http.session-terminated, and http.session-missing's look at a session's
    end), from a client whose ``_meta`` says it is modern (http.session-missing's
    judgment of the message, whatever sessions it saw)."""
    return (
        exchange.method == "POST"
        and "mcp-session-id" not in exchange.headers
        and modern_meta(ctx.params)
    )


def modern_meta(params: Any) -> bool:
    """Whether a request's ``_meta`` names a modern protocol version."""
    meta = params.get("_meta") if isinstance(params, dict) else None
    version = meta.get(VERSION_KEY) if isinstance(meta, dict) else None
    return isinstance(version, str) and version >= "2026-07-28"


def _annotated(tool: dict[str, Any]) -> bool:
    """Whether a tool has valid ``x-mcp-header`` annotations (http.param-header's case)."""
    annotations = header_annotations(tool.get("inputSchema"))
    return bool(annotations) and not any(a.problems for a in annotations or ())


def _marks(typed: bool, *more: tuple[bool, str]) -> frozenset[str]:
    return frozenset(
        [ACCEPT, *([CONTENT_TYPE] if typed else []), *(rule for wanted, rule in more if wanted)]
    )


# The rules whose first_post() a passed message reaches: http.accept always, the others
# as the answer (typed: a 2xx other than 202), the method and the stream say.
_LEGACY_MARKS = {typed: _marks(typed) for typed in (False, True)}
_MODERN_MARKS = {
    (typed, named, call, stream): _marks(
        typed, (True, VERSION), (True, METHOD), (named, NAME), (call, PARAM), (stream, BUFFERING)
    )
    for typed, named, call, stream in itertools.product((False, True), repeat=4)
}
