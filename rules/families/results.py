"""Results (modern): every result carries a ``resultType``.

In 2026-07-28 a result's ``resultType`` is ``complete``, ``input_required``
(an ``InputRequiredResult`` asking the client for input before it retries:
:mod:`mcpeek.rules.families.mrtr`), or a value an advertised extension adds. A legacy server
answering a modern client is judged only once the server has shown it is
modern (:mod:`mcpeek.rules.held`).
"""

from __future__ import annotations

from mcpeek.rules.base import MODERN_SPEC, Finding, Findings, Rule
from mcpeek.rules.context import MessageContext
from mcpeek.rules.families._server import (
    ModernServerRule,
    describe,
    request_capabilities,
    server_response,
    shorten,
)

BASIC = f"{MODERN_SPEC}/basic/index"
CORE_RESULT_TYPES = frozenset({"complete", "input_required"})


class ResultTypeMissing(ModernServerRule):
    id = "result.result-type-missing"
    severity = "error"
    summary = "a result without `resultType` from a modern server"
    spec = f"{BASIC}#result-responses"
    gated = frozenset({"result"})  # the gate's model of a modern result needs resultType
    envelope_gated = gated  # (and so does the envelope check's)

    def check(self, ctx: MessageContext) -> Finding | None:
        result = ctx.result
        if not isinstance(result, dict) or "resultType" not in result:
            return ctx.finding(f"result for {describe(ctx)} has no resultType")
        return None


class ResultTypeUnknown(Rule):
    id = "result.result-type-unknown"
    gated = frozenset({"result"})
    envelope_gated = gated  # (complete or input_required, as the envelope check requires)
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
    caps = request_capabilities(ctx)
    extensions = caps.get("extensions") if isinstance(caps, dict) else None
    return isinstance(extensions, dict) and bool(extensions)
