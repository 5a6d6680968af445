"""JSON-RPC error objects: an integer code, a string message, and the modern code policy.

The 2026-07-28 revision defines -32020, -32021 and -32022 in its reserved
range, removes -32002 and -32042, and asks new implementations not to use
-32000..-32019. A dual-era client's ``server/discover`` probe rejected by a
legacy server in its own terms is no modern error.
"""

from __future__ import annotations

from typing import Any

from mcpeek.rules.base import Findings, Rule
from mcpeek.rules.context import MessageContext
from mcpeek.rules.families.envelope import BASIC, id_phrase, show

#: Error codes the 2026-07-28 specification defines in its reserved sub-range.
DEFINED_CODES = frozenset({-32020, -32021, -32022})
#: Codes of earlier revisions that a 2026-07-28 implementation MUST NOT emit.
LEGACY_CODES = {-32002: "resource not found", -32042: "URL elicitation required"}


# -- error objects ----------------------------------------------------------------------
def _error_object(ctx: MessageContext) -> dict[str, Any] | None:
    error = ctx.error
    return error if isinstance(error, dict) else None


def _code(ctx: MessageContext) -> int | None:
    """The error's integer code, or ``None`` when it has none (error.code-type's)."""
    error = _error_object(ctx)
    code = error.get("code") if error is not None else None
    return code if isinstance(code, int) and not isinstance(code, bool) else None


def _probe_rejection(ctx: MessageContext, code: int) -> bool:
    """A ``server/discover`` probe rejected with a non-modern code: a legacy server
    answering in its own terms (the era is only settled by what follows)."""
    return ctx.method == "server/discover" and code not in DEFINED_CODES


def _about(ctx: MessageContext) -> str:
    method = ctx.method
    return f" for {method} ({id_phrase(ctx.entry)})" if method else f" ({id_phrase(ctx.entry)})"


class ErrorCodeType(Rule):
    id = "error.code-type"
    gated = frozenset({"error"})
    severity = "error"
    summary = "`error.code` is not an integer"
    spec = f"{BASIC}#error-responses"
    kinds = frozenset({"error"})

    def on_message(self, ctx: MessageContext) -> Findings:
        error = ctx.error
        if not isinstance(error, dict):
            return [ctx.finding(f"error member is {show(error)}, not an object with a code")]
        if "code" not in error:
            return [ctx.finding(f"error{_about(ctx)} has no code")]
        if _code(ctx) is None:
            return [ctx.finding(f"error code {show(error['code'])}{_about(ctx)} is not an integer")]
        return None


class ErrorMessage(Rule):
    id = "error.message"
    gated = frozenset({"error"})
    severity = "error"
    summary = "`error.message` missing or not a string"
    spec = f"{BASIC}#error-responses"
    kinds = frozenset({"error"})

    def on_message(self, ctx: MessageContext) -> Findings:
        error = _error_object(ctx)
        if error is None:
            return None  # error.code-type reports a non-object error
        if "message" not in error:
            return [ctx.finding(f"error{_about(ctx)} has no message")]
        if not isinstance(error["message"], str):
            return [
                ctx.finding(f"error message {show(error['message'])}{_about(ctx)} is not a string")
            ]
        return None


class ErrorReservedCode(Rule):
    id = "error.reserved-code"
    gated = frozenset({"error"})
    severity = "error"
    era = "modern"
    summary = "a code in -32020..-32099 that the spec does not define (-32020, -32021, -32022)"
    spec = f"{BASIC}#error-codes"
    kinds = frozenset({"error"})

    def on_message(self, ctx: MessageContext) -> Findings:
        code = _code(ctx)
        if code is None or not -32099 <= code <= -32020 or code in DEFINED_CODES:
            return None
        if code in LEGACY_CODES or _probe_rejection(ctx, code):
            return None  # -32042 is error.legacy-code's
        return [
            ctx.finding(
                f"error code {code}{_about(ctx)} is in the range reserved for the MCP "
                "specification but not defined by it"
            )
        ]


class ErrorLegacyCode(Rule):
    id = "error.legacy-code"
    gated = frozenset({"error"})
    severity = "error"
    era = "modern"
    summary = "-32002 (resource not found) or -32042 (URL elicitation required) in the modern era"
    spec = f"{BASIC}#error-codes"
    kinds = frozenset({"error"})

    def on_message(self, ctx: MessageContext) -> Findings:
        code = _code(ctx)
        if code not in LEGACY_CODES or _probe_rejection(ctx, code):
            return None
        replaced = " (use -32602)" if code == -32002 else ""
        return [
            ctx.finding(
                f"error code {code} ({LEGACY_CODES[code]}){_about(ctx)} was removed in "
                f"2026-07-28{replaced}"
            )
        ]


class ErrorLegacyRange(Rule):
    id = "error.legacy-range"
    gated = frozenset({"error"})
    severity = "warning"
    era = "modern"
    summary = "a code in -32000..-32019 (new implementations SHOULD NOT use it)"
    spec = f"{BASIC}#error-codes"
    kinds = frozenset({"error"})

    def on_message(self, ctx: MessageContext) -> Findings:
        code = _code(ctx)
        if code is None or not -32019 <= code <= -32000:
            return None
        if code in LEGACY_CODES or _probe_rejection(ctx, code):
            return None  # -32002 is error.legacy-code's
        return [
            ctx.finding(f"error code {code}{_about(ctx)} is in the legacy range -32000..-32019")
        ]
