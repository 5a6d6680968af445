"""Schema rules: params, results, notification params and defined errors' ``data`` checked
against typed models of the conversation's protocol version; methods nobody defines.

The models (:mod:`mcpeek.rules.models`) are msgspec Structs decoded straight from a
message's raw ``params`` / ``result`` bytes, with decoders built once. The
version is the conversation's negotiated or declared one (``--spec`` forces it);
an unknown version falls back to the nearest known one of its era.

In the modern era a few schema requirements are left to the rule that already
reports them, so one mistake is reported once: the per-request ``_meta`` fields
(``meta.*``), ``resultType`` (``result.result-type-*``), ``ttlMs``/``cacheScope``
(``cache.fields-missing``), an input request's method (``mrtr.bad-input-request``)
and the shape of -32022's ``data`` (``version.unsupported-error-shape``).
"""

from __future__ import annotations

import functools
import re
from typing import Any

import msgspec

from mcpeek.inspector.analysis import Conversation
from mcpeek.rules.base import MODERN_SPEC, Findings, Rule
from mcpeek.rules.context import MessageContext
from mcpeek.rules.models import (
    ALL_METHODS,
    ALL_NOTIFICATIONS,
    ALL_REQUESTS,
    MODERN_VERSIONS,
    UNSET,
    Model,
    Problem,
    Spec,
    decoder,
    spec_for,
)

BASIC = f"{MODERN_SPEC}/basic/index"
VERSIONING = f"{MODERN_SPEC}/basic/versioning"
_MODERN_ONLY = frozenset(spec_for(MODERN_VERSIONS[-1], "modern").version.requests) - frozenset(
    spec_for(None, "legacy").version.requests
)
#: An extension's or vendor's method: a reverse-DNS prefix (``com.example/…``),
#: possibly under ``notifications/``.
_LABEL = r"[A-Za-z](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
VENDOR_METHOD = re.compile(rf"(?:notifications/)?{_LABEL}(?:\.{_LABEL})+/.")
SHOWN = 60  # characters of a method name or id in a message
METHODS_PER_CONVERSATION = 256  # method.unknown remembers this many names per conversation


@functools.lru_cache(maxsize=128)
def _spec(version: str | None, era: str | None, method: str | None) -> tuple[Spec, bool]:
    """The models for a message, and whether to check strictly (see the module doc)."""
    if era is None and method in _MODERN_ONLY:
        era = "modern"  # a server/discover before its answer says what the server speaks
    return spec_for(version, era), era == "legacy"


def select(ctx: MessageContext) -> tuple[Spec, bool]:
    return _spec(ctx.version, ctx.era, ctx.method)


def shorten(value: Any) -> str:
    if value is msgspec.UNSET:
        return "absent"
    text = value if isinstance(value, str) else msgspec.json.encode(value).decode()
    text = repr(text) if isinstance(value, str) else text
    return text if len(text) <= SHOWN else text[: SHOWN - 1] + "…"


def report(ctx: MessageContext, found: Problem | None, spec: Spec) -> Findings:
    if found is None:
        return None
    method = ctx.method or "?"
    if ctx.kind == "notification":
        what = f"{method} notification"
    else:
        shown_id = shorten(ctx.entry.id)
        if ctx.kind == "request":
            what = f"{method} request (id {shown_id})"
        elif ctx.kind == "result":
            what = f"result for {method} (id {shown_id})"
        else:
            code = ctx.error.get("code") if isinstance(ctx.error, dict) else None
            what = f"error {code} for {method} (id {shown_id})"
    request = ctx.request  # a response is read through its request: both are involved
    also = [request.seq] if request is not None else []
    return [ctx.finding(f"{what}: {found} (schema {spec.name})", also=also)]


class SchemaRequest(Rule):
    id = "schema.request"
    gated = frozenset({"request"})
    severity = "error"
    summary = "request params do not match the spec schema for the method"
    spec = f"{BASIC}#requests"
    kinds = frozenset({"request"})
    methods = ALL_REQUESTS

    def on_message(self, ctx: MessageContext) -> Findings:
        spec, strict = select(ctx)
        found = spec.check_params(ctx.method, ctx.message.params, strict=strict)
        return report(ctx, found, spec)


class SchemaNotification(Rule):
    id = "schema.notification"
    gated = frozenset({"notification"})
    severity = "error"
    summary = "notification params do not match the spec schema"
    spec = f"{BASIC}#notifications"
    kinds = frozenset({"notification"})
    methods = ALL_NOTIFICATIONS

    def on_message(self, ctx: MessageContext) -> Findings:
        spec, strict = select(ctx)
        params = ctx.message.params
        found = spec.check_params(ctx.method, params, notification=True, strict=strict)
        return report(ctx, found, spec)


class _TaskPeek(Model):
    task: Any = UNSET


class _RequestPeek(Model):
    params: _TaskPeek | None = None


class SchemaResult(Rule):
    id = "schema.result"
    gated = frozenset({"result"})
    severity = "error"
    summary = "a result does not match the spec schema for its request's method"
    spec = f"{BASIC}#result-responses"
    kinds = frozenset({"result"})
    methods = ALL_REQUESTS

    def on_message(self, ctx: MessageContext) -> Findings:
        raw = ctx.message.result
        if raw is None:
            return None
        spec, strict = select(ctx)

        def task_augmented() -> bool:
            """2025-11-25: did the request ask for a task (then a CreateTaskResult answers)?"""
            request = ctx.request
            if request is None:
                return True
            try:
                params = decoder(_RequestPeek).decode(request.wire()).params
            except (msgspec.ValidationError, msgspec.DecodeError):
                return True
            return params is not None and params.task is not UNSET

        attempt = ctx.attempt
        peeked = (
            attempt is not None
            and attempt.response is ctx.entry
            and attempt.result_type == "input_required"
        )
        found = spec.check_result(
            ctx.method, raw, strict=strict, task_augmented=task_augmented, input_required=peeked
        )
        return report(ctx, found, spec)


class SchemaError(Rule):
    id = "schema.error"
    gated = frozenset({"error"})
    severity = "error"
    summary = "a defined MCP error (-32020/-32021/-32022; -32042 in 2025-11-25) with bad `data`"
    spec = f"{BASIC}#error-codes"
    kinds = frozenset({"error"})

    def on_message(self, ctx: MessageContext) -> Findings:
        raw = ctx.message.error
        if raw is None:
            return None
        spec, strict = select(ctx)
        return report(ctx, spec.check_error(raw, strict=strict), spec)


class MethodUnknown(Rule):
    id = "method.unknown"
    gated = frozenset({"request", "notification"})
    envelope_gated = gated  # (a method the spec defines: no name remembered)
    severity = "info"
    summary = "a method neither in the spec nor under a vendor/extension prefix"
    spec = f"{VERSIONING}#extension-negotiation"
    kinds = frozenset({"request", "notification"})

    def __init__(self) -> None:
        self.seen: dict[str, set[str]] = {}

    def on_message(self, ctx: MessageContext) -> Findings:
        method = ctx.entry.method
        if method is None or method in ALL_METHODS or VENDOR_METHOD.match(method):
            return None
        seen = self.seen.setdefault(ctx.conversation.key, set())
        if method in seen or len(seen) >= METHODS_PER_CONVERSATION:
            return None  # reported once per conversation
        seen.add(method)
        return [
            ctx.finding(
                f"{ctx.kind} method {shorten(method)} is not defined by any MCP revision and has "
                "no vendor prefix (like com.example/…)"
            )
        ]

    def on_conversation_end(self, conversation: Conversation) -> Findings:
        self.seen.pop(conversation.key, None)
        return None
