"""Request and result ``_meta`` (modern): the per-request protocol fields and ``serverInfo``.

In 2026-07-28 every client request carries its protocol version and client
capabilities (required) and its client identity (SHOULD) in ``_meta``; a
server rejects a request without the required fields with -32602, and names
itself in every result's ``_meta`` (SHOULD). Key names are
:mod:`mcpeek.rules.families.meta_keys`', trace context :mod:`mcpeek.rules.families.meta_trace`'s and
per-request logging :mod:`mcpeek.rules.families.meta_logging`'s.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from mcpeek.inspector.analysis import Entry
from mcpeek.inspector.analysis.analyzer import DROPPED
from mcpeek.rules.base import MODERN_SPEC, Finding, Findings, Rule
from mcpeek.rules.context import MessageContext
from mcpeek.rules.families._server import (
    CLIENT_CAPABILITIES,
    MCP,
    SERVER_INFO,
    ModernServerRule,
    describe,
    request_meta,
    server_response,
    shorten,
)

BASIC = f"{MODERN_SPEC}/basic/index"

PROTOCOL_VERSION = MCP + "protocolVersion"
CLIENT_INFO = MCP + "clientInfo"
REQUIRED = (PROTOCOL_VERSION, CLIENT_CAPABILITIES)


# -- per-request protocol fields ----------------------------------------------------------
class _RequestField(Rule):
    """Base: a client request without one of the per-request ``_meta`` fields.

    Checked on the request; a request sent before the conversation's era was
    known (a first ``server/discover`` without any field) is checked when the
    server's answer makes the conversation modern.
    """

    era = "modern"
    kinds = frozenset({"request", "result", "error"})
    directions: ClassVar[Mapping[str, str]] = {"request": "c2s", "result": "s2c", "error": "s2c"}
    # On a response it judges a request sent before the era was known; the gate passes
    # only answers in flows whose era was (mcpeek.rules.gate.plain_answer).
    gated = frozenset({"request", "result", "error"})
    envelope_gated = frozenset({"result", "error"})  # (a plain answer: its flow's era known)
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
        if request.record is DROPPED:
            return None  # a late answer: the request's bytes are gone, nothing to judge by
        message = self.missing(request, ctx.method, request_meta(ctx))
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
class ServerInfoMissing(ModernServerRule):
    id = "meta.server-info-missing"
    severity = "warning"
    summary = "a result without `io.modelcontextprotocol/serverInfo`"
    spec = f"{BASIC}#meta"
    gated = frozenset({"result"})  # the gate's model of a modern result needs serverInfo

    def check(self, ctx: MessageContext) -> Finding | None:
        result = ctx.result
        meta = result.get("_meta") if isinstance(result, dict) else None
        if isinstance(meta, dict) and meta.get(SERVER_INFO) is not None:
            return None
        return ctx.finding(
            f'result for {describe(ctx)} has no _meta["{SERVER_INFO}"] '
            "(servers SHOULD name themselves in every result)"
        )


UNPROVEN = frozenset({"request_unproven"})


class MalformedAccepted(ModernServerRule):
    id = "meta.malformed-accepted"
    severity = "error"
    summary = "a result to a request that lacked a required `_meta` field (MUST be -32602)"
    spec = f"{BASIC}#meta"

    @classmethod
    def facts_needed(
        cls, kind: str, method: str | None, era: str | None, direction: str
    ) -> frozenset[str]:
        return UNPROVEN  # (the gate's model of a modern request requires both fields)

    def check(self, ctx: MessageContext) -> Finding | None:
        request = ctx.request
        if request is None or request.dir != "c2s" or ctx.request_conformant == "modern":
            return None  # (the gate's model of a modern request requires both fields)
        if request.record is DROPPED:
            return None  # a late answer: the request's bytes are gone, nothing to judge by
        meta = request_meta(ctx) or {}
        missing = [key.removeprefix(MCP) for key in REQUIRED if meta.get(key) is None]
        if not missing:
            return None
        return ctx.finding(
            f"result for {describe(ctx)} although the request lacks {' and '.join(missing)} "
            "in _meta (the server MUST reject it with -32602)",
            also=[request.seq],
        )
