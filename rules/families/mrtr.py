"""Multi round-trip requests (modern): ``InputRequiredResult`` and the client's retry.

Only ``tools/call``, ``prompts/get`` and ``resources/read`` may ask for
input, only with requests the client declared capabilities for, and the
client's retry is a new request (new id) that echoes ``requestState``
exactly.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import msgspec

from mcpeek.inspector.analysis import Attempt
from mcpeek.inspector.analysis.peek import id_key, may_hold
from mcpeek.rules.base import MODERN_SPEC, Findings, Rule
from mcpeek.rules.context import RESULT_BIT, MessageContext
from mcpeek.rules.families._server import (
    describe,
    request_capabilities,
    server_response,
    shorten,
)

MRTR = f"{MODERN_SPEC}/basic/patterns/mrtr"
MRTR_METHODS = frozenset({"tools/call", "prompts/get", "resources/read"})
INPUT_METHODS = frozenset({"elicitation/create", "sampling/createMessage", "roots/list"})


# -- InputRequiredResult -------------------------------------------------------------------
class _InputRequired(Rule):
    """Base: a server's ``input_required`` result."""

    era = "modern"
    kinds = frozenset({"result"})
    directions: ClassVar[Mapping[str, str]] = {"result": "s2c"}

    def on_message(self, ctx: MessageContext) -> Findings:
        if not server_response(ctx):
            return None
        result = ctx.result
        if not isinstance(result, dict) or result.get("resultType") != "input_required":
            return None
        return self.check(ctx, result)

    def check(self, ctx: MessageContext, result: dict[str, Any]) -> Findings:
        raise NotImplementedError

    @staticmethod
    def also(ctx: MessageContext) -> list[int]:
        request = ctx.request
        return [request.seq] if request is not None else []


class MethodNotAllowed(_InputRequired):
    id = "mrtr.method-not-allowed"
    gated = frozenset({"result"})
    severity = "error"
    summary = (
        "`input_required` in reply to a method other than tools/call, prompts/get, resources/read"
    )
    spec = f"{MRTR}#supported-requests"

    def check(self, ctx: MessageContext, result: dict[str, Any]) -> Findings:
        if ctx.method in MRTR_METHODS or ctx.method is None:
            return None
        return [
            ctx.finding(
                f"input_required result for {describe(ctx)}: only tools/call, prompts/get "
                "and resources/read may ask for input",
                also=self.also(ctx),
            )
        ]


class Empty(_InputRequired):
    id = "mrtr.empty"
    gated = frozenset({"result"})
    severity = "error"
    summary = "an `InputRequiredResult` with neither `inputRequests` nor `requestState`"
    spec = f"{MRTR}#server-requirements-basic-workflow"

    def check(self, ctx: MessageContext, result: dict[str, Any]) -> Findings:
        requests = result.get("inputRequests")
        if result.get("requestState") is not None or requests not in (None, {}):
            return None
        # An empty map asks for nothing: with no state either, the retry could only
        # repeat the original request.
        what = (
            "an empty inputRequests and no requestState"
            if requests == {}
            else "neither inputRequests nor requestState"
        )
        return [
            ctx.finding(
                f"input_required result for {describe(ctx)} has {what}",
                also=self.also(ctx),
            )
        ]


def _input_requests(result: dict[str, Any]) -> dict[str, Any]:
    requests = result.get("inputRequests")
    return requests if isinstance(requests, dict) else {}


class BadInputRequest(_InputRequired):
    id = "mrtr.bad-input-request"
    gated = frozenset({"result"})
    severity = "error"
    summary = (
        "an `inputRequests` value whose method is not elicitation/create, "
        "sampling/createMessage or roots/list"
    )
    spec = f"{MRTR}#server-requirements-basic-workflow"

    def check(self, ctx: MessageContext, result: dict[str, Any]) -> Findings:
        bad: list[str] = []
        for key, request in _input_requests(result).items():
            method = request.get("method") if isinstance(request, dict) else None
            if method is None:
                bad.append(f"{key!r} has no method")
            elif method not in INPUT_METHODS:
                bad.append(f"{key!r} is {shorten(method)}")
        if not bad:
            return None
        shown = "; ".join(bad[:5]) + ("; …" if len(bad) > 5 else "")
        return [
            ctx.finding(
                f"input_required result for {describe(ctx)}: inputRequests {shown} "
                "(allowed: elicitation/create, sampling/createMessage, roots/list)",
                also=self.also(ctx),
            )
        ]


def _missing_capability(request: dict[str, Any], caps: dict[str, Any]) -> str | None:
    """The capability an input request needs and ``caps`` lacks (``None``: declared)."""
    method = request.get("method")
    params = request.get("params")
    params = params if isinstance(params, dict) else {}
    if method == "roots/list":
        return None if isinstance(caps.get("roots"), dict) else "roots"
    if method == "sampling/createMessage":
        sampling = caps.get("sampling")
        if not isinstance(sampling, dict):
            return "sampling"
        if params.get("tools") is not None and not isinstance(sampling.get("tools"), dict):
            return "sampling.tools"
        return None
    if method == "elicitation/create":
        elicitation = caps.get("elicitation")
        if not isinstance(elicitation, dict):
            return "elicitation"
        mode = params.get("mode", "form")
        if mode == "url":
            return None if isinstance(elicitation.get("url"), dict) else "elicitation.url"
        if mode == "form":
            # an empty elicitation object means form mode (backwards compatibility)
            if not elicitation or isinstance(elicitation.get("form"), dict):
                return None
            return "elicitation.form"
    return None


class CapabilityNotDeclared(_InputRequired):
    id = "mrtr.capability-not-declared"
    gated = frozenset({"result"})
    severity = "error"
    summary = "an input request the client did not declare the capability for in that request"
    spec = f"{MRTR}#server-requirements-basic-workflow"

    def on_message(self, ctx: MessageContext) -> Findings:
        # Most results ask for no input: without the word in their text, no decode.
        if not ctx.computed & RESULT_BIT and not may_hold(ctx.entry.record, "input_required"):
            return None
        return super().on_message(ctx)

    def check(self, ctx: MessageContext, result: dict[str, Any]) -> Findings:
        requests = _input_requests(result)
        if not requests:
            return None
        caps = request_capabilities(ctx)
        if not isinstance(caps, dict):
            return None  # no clientCapabilities at all: meta.malformed-accepted says so
        missing: list[str] = []
        for key, request in requests.items():
            if isinstance(request, dict):
                needed = _missing_capability(request, caps)
                if needed is not None:
                    missing.append(f"{key!r} ({request.get('method')}) needs {needed}")
        if not missing:
            return None
        shown = "; ".join(missing[:5]) + ("; …" if len(missing) > 5 else "")
        return [
            ctx.finding(
                f"input_required result for {describe(ctx)}: {shown}, which the request's "
                "clientCapabilities do not declare",
                also=self.also(ctx),
            )
        ]


# -- the client's retry ------------------------------------------------------------------
class _Retry(Rule):
    """Base: a client request that retries an ``input_required`` one (same flow)."""

    era = "modern"
    kinds = frozenset({"request"})
    methods = MRTR_METHODS
    directions: ClassVar[Mapping[str, str]] = {"request": "c2s"}
    flow_needs = frozenset({"retry"})  # (the engine's test of the chain below, for all three)

    def on_message(self, ctx: MessageContext) -> Findings:
        attempts = ctx.flow.attempts
        if len(attempts) < 2 or ctx.entry.dir != "c2s":
            return None  # not a chain (the common case): the attempt is not even looked up
        attempt = ctx.attempt
        if attempt is None or attempt is attempts[0]:
            return None
        index = 1  # (a loop, not next() of a generator: three rules ask on every retry)
        while attempts[index] is not attempt:  # (it is there: ctx.attempt is one of them)
            index += 1
        return self.check(ctx, attempt, attempts[:index])

    def check(self, ctx: MessageContext, attempt: Attempt, earlier: list[Attempt]) -> Findings:
        raise NotImplementedError


class RetrySameId(_Retry):
    id = "mrtr.retry-same-id"
    severity = "error"
    summary = "the retry of an `input_required` request reuses the original JSON-RPC id"
    spec = f"{MRTR}#client-requirements-basic-workflow"

    def check(self, ctx: MessageContext, attempt: Attempt, earlier: list[Attempt]) -> Findings:
        key = id_key(ctx.entry.id)
        for previous in earlier:
            if id_key(previous.request.id) == key:
                first = "original" if previous is earlier[0] else "earlier"
                return [
                    ctx.finding(
                        f"retry of {ctx.entry.method} reuses the {first} request's id "
                        f"{shorten(ctx.entry.id)} (a retry is a new request: new id)",
                        also=[previous.request.seq],
                    )
                ]
        return None


def _present(value: Any) -> bool:
    return value is not msgspec.UNSET and value is not None


class RequestStateModified(_Retry):
    id = "mrtr.request-state-modified"
    severity = "error"
    summary = "the retry's `requestState` differs from the one the server issued"
    spec = f"{MRTR}#client-requirements-basic-workflow"

    def check(self, ctx: MessageContext, attempt: Attempt, earlier: list[Attempt]) -> Findings:
        previous = earlier[-1]
        issued = previous.issued_state
        if not _present(issued) or attempt.request_state == issued:
            return None
        also = [previous.response.seq] if previous.response is not None else []
        sent = attempt.request_state
        what = "omits it" if not _present(sent) else f"carries {shorten(sent)}"
        return [
            ctx.finding(
                f"retry of {ctx.entry.method} (id {shorten(ctx.entry.id)}) must echo the "
                f"requestState {shorten(issued)} exactly, but {what}",
                also=also,
            )
        ]


class RequestStateUnsolicited(_Retry):
    id = "mrtr.request-state-unsolicited"
    severity = "error"
    summary = "the retry carries a `requestState` although the server issued none"
    spec = f"{MRTR}#client-requirements-basic-workflow"

    def check(self, ctx: MessageContext, attempt: Attempt, earlier: list[Attempt]) -> Findings:
        previous = earlier[-1]
        if _present(previous.issued_state) or not _present(attempt.request_state):
            return None
        also = [previous.response.seq] if previous.response is not None else []
        return [
            ctx.finding(
                f"retry of {ctx.entry.method} (id {shorten(ctx.entry.id)}) carries requestState "
                f"{shorten(attempt.request_state)} but the input_required result issued none",
                also=also,
            )
        ]
