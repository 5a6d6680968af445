"""Deprecated features in use: Roots, Sampling, Logging (2026-07-28), ``includeContext``.

Reported once per conversation and feature: the point is to see it, not count it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from mcpeek.inspector.analysis import Conversation
from mcpeek.rules.base import MODERN_SPEC, Finding, Findings, Rule
from mcpeek.rules.context import MessageContext
from mcpeek.rules.families._server import UNSET
from mcpeek.rules.families._wire import MCP, as_dict, where

INCLUDE_CONTEXT_DEPRECATED_IN = "2025-11-25"


DEPRECATED_CONTEXT = frozenset({"thisServer", "allServers"})
ASKS_FOR_LOGS = frozenset({"log_level"})


def _asks_for_logs(ctx: MessageContext) -> bool:
    """Whether a request's ``_meta`` may name a log level (any value): as correlation read
    it (``Attempt.log_level``; the engine calls this rule on a modern client's request
    only then, ``facts_needed``), the careful decode telling when it could not read it."""
    attempts = ctx.flow.attempts
    attempt = attempts[-1] if attempts and attempts[-1].request is ctx.entry else ctx.attempt
    return attempt is not None and attempt.log_level is not UNSET


class DeprecatedFeature(Rule):
    """Reported once per conversation and feature: the point is to see it, not count it."""

    id = "deprecated.feature"
    # The gate passes logLevel and notifications/message, which this rule is about.
    gated = frozenset({"result"})
    severity = "info"
    era = None
    summary = "a Deprecated feature in use (Roots, Sampling, Logging; `includeContext`)"
    spec = f"{MODERN_SPEC}/deprecated#deprecated"
    kinds = frozenset({"request", "notification", "result"})
    kind_methods: ClassVar[Mapping[str, frozenset[str]]] = {
        "notification": frozenset({"notifications/message"})
    }

    def __init__(self) -> None:
        self._seen: dict[str, set[str]] = {}

    @classmethod
    def facts_needed(
        cls, kind: str, method: str | None, era: str | None, direction: str
    ) -> frozenset[str]:
        # (a modern client's request matters for its log level only)
        modern_request = kind == "request" and era == "modern" and direction == "c2s"
        return ASKS_FOR_LOGS if modern_request else frozenset()

    def on_message(self, ctx: MessageContext) -> Findings:
        found: list[tuple[str, str]] = []  # (feature, what)
        modern = ctx.era == "modern"
        if ctx.kind == "result":
            attempt = ctx.attempt
            if not modern or attempt is None or attempt.result_type != "input_required":
                return None  # (correlation peeked resultType: no decode of other results)
            result = as_dict(ctx.result)
            if result is None or result.get("resultType") != "input_required":
                return None
            requests = as_dict(result.get("inputRequests")) or {}
            for name, value in requests.items():
                request = as_dict(value) or {}
                method = request.get("method")
                if method == "sampling/createMessage":
                    found.append(("Sampling", f"input request {name!r} is sampling/createMessage"))
                    found.extend(self._include_context(as_dict(request.get("params")), name))
                elif method == "roots/list":
                    found.append(("Roots", f"input request {name!r} is roots/list"))
        elif ctx.kind == "notification":
            entry = ctx.entry
            if not modern or entry.method != "notifications/message" or entry.dir != "s2c":
                return None
            if self._reported(ctx, "Logging"):
                return None  # (once per conversation: the rest of a log is not news)
            found.append(("Logging", "the server sent notifications/message"))
        elif ctx.entry.dir == "c2s":
            if not modern or not _asks_for_logs(ctx):
                return None
            if self._reported(ctx, "Logging"):
                return None
            meta = ctx.meta
            if meta is not None and MCP + "logLevel" in meta:
                found.append(("Logging", f"{where(ctx)} asks for log messages (logLevel)"))
        elif ctx.entry.method == "sampling/createMessage":
            version = ctx.version
            if modern or (version is not None and version >= INCLUDE_CONTEXT_DEPRECATED_IN):
                found.extend(self._include_context(as_dict(ctx.params), None))
        if not found:
            return None
        seen = self._seen.setdefault(ctx.conversation.key, set())
        out: list[Finding] = []
        for feature, what in found:
            if feature in seen:
                continue
            seen.add(feature)
            since = "2025-11-25" if feature.startswith("includeContext") else "2026-07-28"
            out.append(ctx.finding(f"{feature} is deprecated since {since}: {what}"))
        return out

    def _reported(self, ctx: MessageContext, feature: str) -> bool:
        seen = self._seen.get(ctx.conversation.key)
        return seen is not None and feature in seen

    @staticmethod
    def _include_context(params: dict[str, Any] | None, name: str | None) -> list[tuple[str, str]]:
        value = params.get("includeContext") if params else None
        if not isinstance(value, str) or value not in DEPRECATED_CONTEXT:
            return []
        where_ = f"input request {name!r}" if name is not None else "sampling/createMessage"
        return [(f'includeContext "{value}"', f'{where_} has includeContext "{value}"')]

    def on_conversation_end(self, conversation: Conversation) -> Findings:
        self._seen.pop(conversation.key, None)
        return None
