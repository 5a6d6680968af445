"""JSON-RPC envelope rules: version, shape, ids, pairing, error objects.

Both eras share JSON-RPC 2.0 with MCP's additions (ids never null, no
batches outside 2025-03-26); the modern revision adds an error-code policy.
"""

from __future__ import annotations

import msgspec

from rules.base import MODERN_SPEC, Findings, Rule
from rules.context import MessageContext

BASIC = f"{MODERN_SPEC}/basic/index"


class JsonrpcVersion(Rule):
    id = "jsonrpc.version"
    severity = "error"
    summary = '`jsonrpc` missing or not exactly "2.0"'
    spec = f"{BASIC}#messages"
    kinds = frozenset({"request", "notification", "result", "error"})

    def on_message(self, ctx: MessageContext) -> Findings:
        version = ctx.message.jsonrpc
        if isinstance(version, str) and version == "2.0":
            return None
        shown = (
            "missing" if version is msgspec.UNSET else f"{msgspec.json.encode(version).decode()}"
        )
        return [ctx.finding(f'jsonrpc is {shown}, must be "2.0"')]


class IdNull(Rule):
    id = "id.null"
    severity = "error"
    summary = "`id` is null on a request or on a response whose request id was readable"
    spec = f"{BASIC}#requests"
    kinds = frozenset({"request", "result"})

    def on_message(self, ctx: MessageContext) -> Findings:
        if ctx.entry.id is None:
            what = "request" if ctx.kind == "request" else "result"
            return [ctx.finding(f"{what} has a null id (MCP ids MUST NOT be null)")]
        return None
