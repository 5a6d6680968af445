"""Protocol versions (modern): the -32022 error, ``server/discover`` and removed methods.

The modern era (2026-07-28) has no handshake: versions travel on every
request, ``server/discover`` is mandatory, and the handshake methods and a
few others are gone. A dual-era client may probe a server with
``server/discover`` and fall back to ``initialize`` when the server answers
with an error that is not a recognised modern one: that probe is no error.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, ClassVar

from mcpeek.inspector.analysis import Conversation
from mcpeek.inspector.analysis.era import MODERN_ERROR_CODES, is_modern_version
from mcpeek.inspector.records import Msg
from mcpeek.rules.base import MODERN_SPEC, Era, Finding, Findings, Rule
from mcpeek.rules.context import ERROR_BIT, MessageContext
from mcpeek.rules.families._wire import MCP, as_dict, side, where

VERSIONING = f"{MODERN_SPEC}/basic/versioning"
TASKS_EXTENSION = MCP + "tasks"
METHOD_NOT_FOUND = -32601
UNSUPPORTED_VERSION = -32022


#: A JSON number equal to -32022 is written with those digits (``-32022``,
#: ``-32022.0``), as one that rounds to it (``-32021.99999999999999``), or with an
#: exponent, which follows a digit (``-3.2022e4``).
_UNSUPPORTED_TEXT = re.compile(r"3202(?:2|1\.9)|[0-9][eE]")


def _may_be_unsupported(record: Msg) -> bool:
    """Whether an error's text may hold the code -32022 (``False`` is certain: no decode)."""
    raw = record.raw
    if raw is None:
        return record.raw_b64 is not None
    return _UNSUPPORTED_TEXT.search(raw) is not None


class VersionUnsupportedErrorShape(Rule):
    id = "version.unsupported-error-shape"
    gated = frozenset({"error"})
    severity = "error"
    era = "modern"
    summary = "a -32022 error without `data.supported` (array) and `data.requested`"
    spec = f"{VERSIONING}#protocol-version-negotiation"
    kinds = frozenset({"error"})
    directions: ClassVar[Mapping[str, str]] = {"error": "s2c"}

    def on_message(self, ctx: MessageContext) -> Findings:
        if ctx.entry.dir != "s2c":
            return None
        if not ctx.computed & ERROR_BIT and not _may_be_unsupported(ctx.entry.record):
            return None  # the common case: another code, told without a decode
        error = as_dict(ctx.error)
        if error is None or error.get("code") != UNSUPPORTED_VERSION:
            return None
        data = as_dict(error.get("data"))
        missing: list[str] = []
        if data is None:
            missing = ["data"]
        else:
            if not isinstance(data.get("supported"), list):
                missing.append("data.supported (array)")
            if "requested" not in data:
                missing.append("data.requested")
        if not missing:
            return None
        return [
            ctx.finding(
                f"UnsupportedProtocolVersionError (-32022) for {where(ctx)} "
                f"lacks {' and '.join(missing)}"
            )
        ]


def is_modern_evidence(ctx: MessageContext) -> bool:
    """A server message only a modern server sends: a result with ``resultType`` or
    ``serverInfo`` in its ``_meta``, or a recognised modern error."""
    if ctx.entry.dir != "s2c":
        return False
    if ctx.kind == "error":
        error = as_dict(ctx.error)
        return error is not None and error.get("code") in MODERN_ERROR_CODES
    if ctx.kind != "result":
        return False
    attempt = ctx.attempt
    if attempt is not None and attempt.result_type is not None:
        return True  # correlation peeked a resultType already
    result = as_dict(ctx.result)
    if result is None:
        return False
    if isinstance(result.get("resultType"), str):
        return True
    meta = as_dict(result.get("_meta"))
    return meta is not None and MCP + "serverInfo" in meta


class VersionDiscoverMissing(Rule):
    """A ``server/discover`` answered with -32601 is a legacy server's answer to a
    probe, unless the same server later answers as a modern server (and the client
    never fell back to ``initialize``, which would make the conversation legacy)."""

    id = "version.discover-missing"
    severity = "error"
    era = "modern"
    summary = "a modern server answers `server/discover` with method-not-found"
    spec = f"{VERSIONING}#protocol-version-negotiation"
    kinds = frozenset({"result", "error"})
    directions: ClassVar[Mapping[str, str]] = {"result": "s2c", "error": "s2c"}
    # a result is judged only after a -32601 to server/discover: with none, no call
    idle_kinds = frozenset({"result"})

    def __init__(self) -> None:
        # conversation → (discover request seq, error seq)
        self._pending: dict[str, tuple[int, int]] = {}

    def idle(self) -> bool:
        return not self._pending

    def on_message(self, ctx: MessageContext) -> Findings:
        if ctx.entry.dir != "s2c":
            return None
        key = ctx.conversation.key
        if ctx.method == "server/discover" and ctx.kind == "error":
            error = as_dict(ctx.error)
            if error is not None and error.get("code") == METHOD_NOT_FOUND:
                request = ctx.request
                self._pending[key] = (request.seq if request else 0, ctx.seq)
            return None
        pending = self._pending.get(key)
        if pending is None or not is_modern_evidence(ctx):
            return None
        del self._pending[key]
        request_seq, error_seq = pending
        if any(
            era == "legacy" and seq > error_seq for seq, era, _ in ctx.conversation.declared.changes
        ):
            return None
        also = [s for s in (request_seq, ctx.seq) if s]
        return [
            Finding(
                msgs=[*also, error_seq],
                message=(
                    f"server/discover was answered with method-not-found (-32601), "
                    f"yet the server answers as a modern server (seq {ctx.seq})"
                ),
            )
        ]

    def on_conversation_end(self, conversation: Conversation) -> Findings:
        self._pending.pop(conversation.key, None)
        return None


REMOVED_METHODS: dict[str, str] = {
    "initialize": "the initialize handshake",
    "notifications/initialized": "the initialize handshake",
    "ping": "ping",
    "logging/setLevel": "logging/setLevel (the log level is per request now)",
    "resources/subscribe": "resources/subscribe (use subscriptions/listen)",
    "resources/unsubscribe": "resources/unsubscribe (use subscriptions/listen)",
    "notifications/roots/list_changed": "notifications/roots/list_changed",
    "notifications/elicitation/complete": "notifications/elicitation/complete",
}


#: Core tasks (2025-11-25); the tasks extension keeps some of these names.
CORE_TASKS = frozenset(
    {"tasks/get", "tasks/result", "tasks/list", "tasks/cancel", "notifications/tasks/status"}
)


#: Gone even from the tasks extension.
TASKS_REMOVED_EVERYWHERE = frozenset({"tasks/result", "tasks/list"})


JUDGED_METHODS = frozenset({*REMOVED_METHODS, *CORE_TASKS})


class _ProbeState:
    __slots__ = ("modern_only_seq", "proven_seq", "rejected")

    def __init__(self) -> None:
        self.proven_seq = 0  # a server message that proved the server modern
        self.modern_only_seq = 0  # …and listed only modern versions
        self.rejected = False  # a server/discover probe rejected with a non-modern error


PROBE_REJECTED = frozenset({"probe_rejected"})


class VersionRemovedMethod(Rule):
    """Gated by hand: ``initialize`` makes the conversation legacy before any rule
    sees it, so the rule itself decides when the modern era holds."""

    id = "version.removed-method"
    gated = frozenset({"request", "notification"})
    severity = "error"
    era = None  # see the class docstring: modern only, decided per message
    #: the era docs/rules.md gives the rule (the engine cannot gate it: see the docstring)
    catalog_era: ClassVar[Era] = "modern"
    summary = "a method the modern spec removed (`initialize`, `ping`, `logging/setLevel`…)"
    spec = f"{MODERN_SPEC}/changelog#major-changes"
    kinds = frozenset({"request", "notification", "result", "error"})

    def __init__(self) -> None:
        self._state: dict[str, _ProbeState] = {}

    @classmethod
    def facts_needed(
        cls, kind: str, method: str | None, era: str | None, direction: str
    ) -> frozenset[str]:
        # A response matters only to learn from a server/discover answer, or, once a
        # probe was rejected, as the evidence that the server is modern after all.
        if kind in ("result", "error") and method != "server/discover":
            return PROBE_REJECTED
        return frozenset()

    def on_message(self, ctx: MessageContext) -> Findings:
        if not ctx.is_response and ctx.entry.method not in JUDGED_METHODS:
            return None  # the common case: a method that was not removed
        state = self._state.get(ctx.conversation.key)
        if ctx.is_response:
            if ctx.entry.dir == "s2c" and ctx.method == "server/discover":
                state = state or self._state.setdefault(ctx.conversation.key, _ProbeState())
                self._learn(ctx, state)
            elif (
                state is not None
                and state.rejected
                and not state.proven_seq
                and ctx.era == self.catalog_era  # not after the fallback to initialize
                and is_modern_evidence(ctx)
            ):
                state.proven_seq = ctx.seq  # a modern server after all (no discover)
            return None
        method = ctx.entry.method
        if method is None or (method not in REMOVED_METHODS and method not in CORE_TASKS):
            return None
        if method == "initialize":
            if ctx.entry.dir != "c2s" or state is None or not state.modern_only_seq:
                return None
            return [
                ctx.finding(
                    "initialize sent to a server that answered server/discover as a "
                    "modern-only server (a dual-era client must not fall back then)",
                    also=[state.modern_only_seq],
                )
            ]
        if ctx.era != self.catalog_era or (state and state.rejected and not state.proven_seq):
            return None  # legacy, or a dual-era probe was just rejected by a legacy server
        if (
            method in CORE_TASKS
            and method not in TASKS_REMOVED_EVERYWHERE
            and self._tasks_extension(ctx)
        ):
            return None
        what = REMOVED_METHODS.get(method, f"{method} (core tasks moved to an extension)")
        return [ctx.finding(f"{side(ctx.entry.dir)} sent {method}, removed in 2026-07-28: {what}")]

    def _learn(self, ctx: MessageContext, state: _ProbeState) -> None:
        versions: Any = None
        if ctx.kind == "result":
            result = as_dict(ctx.result)
            versions = result.get("supportedVersions") if result else None
            state.proven_seq = ctx.seq
        else:
            error = as_dict(ctx.error)
            if error is None:
                return
            if error.get("code") in MODERN_ERROR_CODES:
                state.proven_seq = ctx.seq
                data = as_dict(error.get("data"))
                versions = data.get("supported") if data else None
            else:
                state.rejected = True
                return
        if isinstance(versions, list) and versions and all(is_modern_version(v) for v in versions):
            state.modern_only_seq = ctx.seq

    @staticmethod
    def _tasks_extension(ctx: MessageContext) -> bool:
        for declared in (
            ctx.conversation.declared.server_capabilities,
            ctx.flow.client_capabilities,
        ):
            caps = as_dict(declared)
            extensions = as_dict(caps.get("extensions")) if caps else None
            if extensions is not None and TASKS_EXTENSION in extensions:
                return True
        return False

    def on_conversation_end(self, conversation: Conversation) -> Findings:
        self._state.pop(conversation.key, None)
        return None
