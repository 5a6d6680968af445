"""Streamable HTTP request headers: what a client POST must say beside its body.

A client POST lists both media types it accepts (``Accept``), states the
protocol version (``MCP-Protocol-Version``, required after a 2025-06-18+
initialize and on every modern request) and, in the modern era, mirrors the
body into headers a proxy can route on: ``Mcp-Method``, ``Mcp-Name`` (the
tool, prompt or resource) and one ``Mcp-Param-*`` per argument the tool's
``inputSchema`` marks with ``x-mcp-header`` (Value Encoding:
:mod:`mcpeek.rules.families._http_values`). Each POST is judged once, on its first client
message.

How the rules follow the exchanges and gate on the era is in
:mod:`mcpeek.rules.families._http_exchanges`; the statuses and content types of the
responses are in :mod:`mcpeek.rules.families.http_status`, sessions in
:mod:`mcpeek.rules.families.http_sessions`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from mcpeek.rules.base import Findings
from mcpeek.rules.context import MessageContext
from mcpeek.rules.families._bounded import MAX_CONVERSATIONS, Lru
from mcpeek.rules.families._http_exchange_state import (
    FROM_CLIENT,
    JSON,
    MCP,
    NAME_METHODS,
    SSE,
    STREAMABLE,
    Exchange,
    media_type,
)
from mcpeek.rules.families._http_exchanges import (
    HttpRule,
    described,
    post_without,
    what,
)
from mcpeek.rules.families._http_kept import declared_tool
from mcpeek.rules.families._http_values import (
    ABSENT,
    argument,
    decode_header,
    header_mismatch,
    header_text,
    needs_encoding,
)
from mcpeek.rules.families._messages import shown
from mcpeek.rules.families._toolschema import header_annotations

# Re-exported: the tests import the Value Encoding helpers from here.
__all__ = ["decode_header", "header_mismatch", "needs_encoding"]


class HttpAccept(HttpRule):
    id = "http.accept"
    head_gated = True  # (_http_quiet)
    severity = "error"
    summary = "a client POST whose Accept does not list both application/json and text/event-stream"
    spec = f"{STREAMABLE}#sending-messages"
    directions = FROM_CLIENT

    def __init__(self) -> None:
        super().__init__()
        self._good: str | None = None  # the last Accept value that listed both (clients repeat it)

    def judge(self, ctx: MessageContext, exchange: Exchange) -> Findings:
        if not self.first_post(ctx, exchange):
            return None
        accept = exchange.headers.get("accept")
        if accept is not None and accept == self._good:
            return None
        listed = {media_type(part) for part in (accept or "").split(",")}
        if JSON in listed and SSE in listed:
            self._good = accept
            return None
        header = described("Accept", accept, 80)
        return self.on_post(
            ctx,
            exchange,
            f"POST carrying {what(ctx)} has {header}; it must list both {JSON} and {SSE}",
        )


class HttpProtocolVersionHeader(HttpRule):
    id = "http.protocol-version-header"
    head_gated = True  # (_http_quiet)
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
                return self.on_post(ctx, exchange, post_without(ctx, "MCP-Protocol-Version"))
            body = (ctx.meta or {}).get(MCP + "protocolVersion")
            if isinstance(body, str) and body != header:
                return self.on_post(
                    ctx,
                    exchange,
                    f"MCP-Protocol-Version header {shown(header, 40)} differs from the "
                    f"body's {MCP}protocolVersion {shown(body, 40)} in {what(ctx)}",
                )
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
        return self.on_post(
            ctx,
            exchange,
            post_without(ctx, "MCP-Protocol-Version")
            + f" (required on every request after initialize negotiated {negotiated})",
        )


class HttpMethodHeader(HttpRule):
    id = "http.method-header"
    head_gated = True  # (_http_quiet)
    severity = "error"
    catalog_era = "modern"
    summary = "on a request POST, Mcp-Method missing or different from the body's method"
    spec = f"{STREAMABLE}#standard-request-headers"
    kinds = frozenset({"request"})
    directions = FROM_CLIENT

    def judge(self, ctx: MessageContext, exchange: Exchange) -> Findings:
        if ctx.kind != "request" or not self.first_post(ctx, exchange):
            return None
        header = exchange.headers.get("mcp-method")
        if header is None:
            problem = post_without(ctx, "Mcp-Method")
        elif header != ctx.method:
            problem = (
                f"Mcp-Method header {shown(header, 60)} differs from the body's method "
                f"{shown(ctx.method, 60)} (id {shown(ctx.entry.id, 40)})"
            )
        else:
            return None
        return self.on_post(ctx, exchange, problem)


class HttpNameHeader(HttpRule):
    id = "http.name-header"
    head_gated = True  # (_http_quiet)
    severity = "error"
    catalog_era = "modern"
    summary = "Mcp-Name missing on tools/call, resources/read, prompts/get, or not the body's name"
    spec = f"{STREAMABLE}#standard-request-headers"
    kinds = frozenset({"request"})
    directions = FROM_CLIENT

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
            problem = post_without(ctx, "Mcp-Name") + f" (params.{member})"
        else:
            mismatch = header_mismatch(header, expected)
            if mismatch is None:
                return None
            problem = f"Mcp-Name header of {what(ctx)} {mismatch}"
        return self.on_post(ctx, exchange, problem)


class HttpParamHeader(HttpRule):
    id = "http.param-header"
    head_gated = True  # (_http_quiet)
    severity = "error"
    catalog_era = "modern"
    summary = "an Mcp-Param-* header missing or different from the argument its x-mcp-header names"
    spec = f"{STREAMABLE}#custom-headers-from-tool-parameters"
    kind_methods: ClassVar[Mapping[str, frozenset[str]]] = {"request": frozenset({"tools/call"})}
    kinds = frozenset({"request"})
    directions = FROM_CLIENT

    def judge(self, ctx: MessageContext, exchange: Exchange) -> Findings:
        if ctx.method != "tools/call" or ctx.kind != "request":
            return None
        if not self.first_post(ctx, exchange):
            return None
        params = ctx.params if isinstance(ctx.params, dict) else {}
        name = params.get("name")
        tool = declared_tool(ctx, name) if isinstance(name, str) else None
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
            value = argument(arguments, annotation.chain)
            if value is ABSENT:
                if header is not None:
                    problems.append(f"{header_name} is sent but {where} is absent or null")
                continue
            text = header_text(value)
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
        return self.on_post(
            ctx,
            exchange,
            f"tools/call {shown(name, 60)} (id {shown(ctx.entry.id, 40)}): " + "; ".join(problems),
        )
