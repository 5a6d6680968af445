"""Versions, lifecycle, capabilities and deprecated features.

The legacy era (2025-11-25 and earlier) opens with an ``initialize``
handshake: ``initialize`` first, its response, then
``notifications/initialized``; the negotiated version and the capabilities
both sides declared hold for the session. The modern era (2026-07-28) has no
handshake: versions travel on every request, ``server/discover`` is
mandatory, the handshake methods and a few others are gone, and Roots,
Sampling and Logging are deprecated.

A dual-era client may probe a server with ``server/discover`` and fall back
to ``initialize`` when the server answers with an error that is not a
recognised modern one: that probe is not a lifecycle error, nor is a
``ping`` before ``initialize``.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, ClassVar

import msgspec

from inspector.analysis import Conversation
from inspector.analysis.era import MODERN_ERROR_CODES, is_modern_version
from inspector.records import Http, Record
from rules.base import LEGACY_SPEC, MODERN_SPEC, Era, Finding, Findings, Rule
from rules.context import MessageContext

LIFECYCLE = f"{LEGACY_SPEC}/basic/lifecycle"
VERSIONING = f"{MODERN_SPEC}/basic/versioning"
MCP = "io.modelcontextprotocol/"
TASKS_EXTENSION = MCP + "tasks"
METHOD_NOT_FOUND = -32601
UNSUPPORTED_VERSION = -32022
WINDOW = 4096  # bounded memories (HTTP exchanges, progress tokens…)
#: On HTTP, a notification POST and the next request POST may cross: an
#: ``initialized`` that follows a request this closely is not "missing".
HTTP_GRACE_S = 1.0


def shown(value: Any) -> str:
    """A JSON value as it appears on the wire (ids, versions)."""
    try:
        return msgspec.json.encode(value).decode()
    except (TypeError, msgspec.EncodeError):
        return repr(value)


def where(ctx: MessageContext) -> str:
    """``tools/call (id 4)`` for a request or its response."""
    method = ctx.method or "?"
    msg_id = ctx.entry.id
    if msg_id is msgspec.UNSET:
        return method
    return f"{method} (id {shown(msg_id)})"


def as_dict(value: Any) -> dict[str, Any] | None:
    return value if isinstance(value, dict) else None


def side(direction: str) -> str:
    return "client" if direction == "c2s" else "server"


# -- versions (modern) ---------------------------------------------------------------------


class VersionUnsupportedErrorShape(Rule):
    id = "version.unsupported-error-shape"
    severity = "error"
    era = "modern"
    summary = "a -32022 error without `data.supported` (array) and `data.requested`"
    spec = f"{VERSIONING}#protocol-version-negotiation"
    kinds = frozenset({"error"})

    def on_message(self, ctx: MessageContext) -> Findings:
        if ctx.entry.dir != "s2c":
            return None
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

    def __init__(self) -> None:
        # conversation → (discover request seq, error seq)
        self._pending: dict[str, tuple[int, int]] = {}

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


class _ProbeState:
    __slots__ = ("modern_only_seq", "proven_seq", "rejected")

    def __init__(self) -> None:
        self.proven_seq = 0  # a server message that proved the server modern
        self.modern_only_seq = 0  # …and listed only modern versions
        self.rejected = False  # a server/discover probe rejected with a non-modern error


class VersionRemovedMethod(Rule):
    """Gated by hand: ``initialize`` makes the conversation legacy before any rule
    sees it, so the rule itself decides when the modern era holds."""

    id = "version.removed-method"
    severity = "error"
    era = None  # see the class docstring: modern only, decided per message
    #: the era RULES.md gives the rule (the engine cannot gate it: see the docstring)
    catalog_era: ClassVar[Era] = "modern"
    summary = "a method the modern spec removed (`initialize`, `ping`, `logging/setLevel`…)"
    spec = f"{MODERN_SPEC}/changelog#major-changes"
    kinds = frozenset({"request", "notification", "result", "error"})

    def __init__(self) -> None:
        self._state: dict[str, _ProbeState] = {}

    def on_message(self, ctx: MessageContext) -> Findings:
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


# -- lifecycle (legacy) --------------------------------------------------------------------


class LifecycleNotInitializedFirst(Rule):
    id = "lifecycle.not-initialized-first"
    severity = "error"
    era = "legacy"
    summary = "the first interaction is not `initialize`"
    spec = f"{LIFECYCLE}#initialization"
    kinds = frozenset({"request", "notification"})

    def __init__(self) -> None:
        self._decided: set[str] = set()

    def on_message(self, ctx: MessageContext) -> Findings:
        key = ctx.conversation.key
        if key in self._decided:
            return None
        method = ctx.entry.method
        if method == "initialize" and ctx.entry.dir == "c2s":
            self._decided.add(key)
            return None
        if ctx.kind == "request":
            if method in ("ping", "server/discover"):
                return None  # allowed before initialize; a dual-era probe
        elif not (ctx.entry.dir == "c2s" and method == "notifications/initialized"):
            return None  # other notifications (a probe's cancellation, logging…)
        self._decided.add(key)
        return [
            ctx.finding(
                f"the {side(ctx.entry.dir)} sent {method} before any initialize request "
                "(initialization MUST be the first interaction)"
            )
        ]

    def on_conversation_end(self, conversation: Conversation) -> Findings:
        self._decided.discard(conversation.key)
        return None


class _Handshake:
    __slots__ = ("init_request", "init_result", "initialized", "pending", "reported")

    def __init__(self) -> None:
        self.init_request = 0  # seq of the last initialize request
        self.init_result = 0  # seq of its successful response
        self.initialized = 0  # seq of notifications/initialized
        self.pending: tuple[int, float] | None = None  # HTTP: (request seq, t)
        self.reported = False


class LifecycleEarlyRequest(Rule):
    id = "lifecycle.early-request"
    severity = "warning"
    era = "legacy"
    summary = "a request other than `ping` before the handshake allows it"
    spec = f"{LIFECYCLE}#initialization"
    kinds = frozenset({"request", "notification", "result", "error"})

    def __init__(self) -> None:
        self._state: dict[str, _Handshake] = {}

    def on_message(self, ctx: MessageContext) -> Findings:
        key = ctx.conversation.key
        state = self._state.get(key)
        method = ctx.method
        if ctx.kind == "request" and method == "initialize" and ctx.entry.dir == "c2s":
            state = self._state.setdefault(key, _Handshake())
            state.init_request, state.init_result = ctx.seq, 0
            return None
        if state is None or not state.init_request:
            return None  # before initialize: lifecycle.not-initialized-first says it
        if ctx.is_response:
            if method == "initialize" and ctx.entry.dir == "s2c":
                state.init_result = ctx.seq
            return None
        if ctx.kind == "notification":
            if ctx.entry.dir == "c2s" and method == "notifications/initialized":
                state.initialized = ctx.seq
            return None
        if method == "ping":
            return None
        if ctx.entry.dir == "c2s":
            if state.init_result or method == "server/discover":
                return None
            return [
                ctx.finding(
                    f"the client sent {where(ctx)} before the server answered initialize",
                    also=[state.init_request],
                )
            ]
        if state.initialized or state.reported:
            return None
        state.reported = True  # once: a client that never sends it would make this noise
        return [
            ctx.finding(
                f"the server sent {where(ctx)} before the client's notifications/initialized",
                also=[state.init_request],
            )
        ]

    def on_conversation_end(self, conversation: Conversation) -> Findings:
        self._state.pop(conversation.key, None)
        return None


class LifecycleInitializedMissing(Rule):
    id = "lifecycle.initialized-missing"
    severity = "error"
    era = "legacy"
    summary = "the client sends further requests without having sent `notifications/initialized`"
    spec = f"{LIFECYCLE}#initialization"
    kinds = frozenset({"request", "notification", "result"})

    def __init__(self) -> None:
        self._state: dict[str, _Handshake] = {}

    def on_message(self, ctx: MessageContext) -> Findings:
        key = ctx.conversation.key
        state = self._state.get(key)
        method = ctx.method
        if ctx.kind == "result":
            if method == "initialize" and ctx.entry.dir == "s2c":
                state = self._state.setdefault(key, _Handshake())
                state.init_result = ctx.seq
            return None
        if state is None or ctx.entry.dir != "c2s" or state.reported:
            return None
        if ctx.kind == "notification":
            if method != "notifications/initialized" or state.initialized:
                return None
            state.initialized = ctx.seq
            pending, state.pending = state.pending, None
            if pending is None:
                return None
            request_seq, t = pending
            if ctx.entry.t - t <= HTTP_GRACE_S:
                return None  # crossed on the wire (HTTP)
            state.reported = True
            return [self._finding(request_seq, late=ctx.seq)]
        if state.initialized or method in ("ping", "initialize") or state.pending:
            return None
        if ctx.conversation.transport == "http":
            state.pending = (ctx.seq, ctx.entry.t)
            return None
        state.reported = True
        return [self._finding(ctx.seq)]

    def _finding(self, request_seq: int, late: int = 0) -> Finding:
        text = "the client sent a request after initialize without notifications/initialized"
        if late:
            text += f" (it came only later, seq {late})"
        return Finding(msgs=[late, request_seq] if late else [request_seq], message=text)

    def on_conversation_end(self, conversation: Conversation) -> Findings:
        state = self._state.pop(conversation.key, None)
        if state is None or state.pending is None or state.reported:
            return None
        return [self._finding(state.pending[0])]


class _Versions:
    __slots__ = ("listed", "listed_seq", "negotiated", "requested")

    def __init__(self) -> None:
        self.requested: str | None = None
        self.listed: list[str] | None = None  # what the server said it supports
        self.listed_seq = 0
        self.negotiated: str | None = None


class LifecycleVersionMismatch(Rule):
    """Gated by hand (era ``None``): it also reads the HTTP request records, which
    reach rules before their conversation (hence before any era) is known."""

    id = "lifecycle.version-mismatch"
    severity = "error"
    era = None  # legacy only, decided per message (see the class docstring)
    #: the era RULES.md gives the rule (the engine cannot gate it: see the docstring)
    catalog_era: ClassVar[Era] = "legacy"
    summary = "the `initialize` versions do not agree with what either side offered"
    spec = f"{LIFECYCLE}#version-negotiation"
    kinds = frozenset({"request", "result", "error"})

    record_types = frozenset({Http})

    def __init__(self) -> None:
        self._state: dict[str, _Versions] = {}
        self._headers: OrderedDict[str, str] = OrderedDict()  # HTTP exchange → version header

    def on_record(self, record: Record, conversation: Conversation | None) -> Findings:
        if not isinstance(record, Http):
            return None
        if record.phase == "end":
            self._headers.pop(record.x, None)
        elif record.phase == "request":
            for name, value in record.headers or ():
                if name.lower() == "mcp-protocol-version":
                    self._headers[record.x] = value
                    if len(self._headers) > WINDOW:
                        self._headers.popitem(last=False)
                    break
        return None

    def on_message(self, ctx: MessageContext) -> Findings:
        if ctx.era != self.catalog_era:
            return None
        key = ctx.conversation.key
        method = ctx.method
        if ctx.kind == "request":
            if ctx.entry.dir != "c2s":
                return None
            if method == "initialize":
                state = self._state.setdefault(key, _Versions())
                params = as_dict(ctx.params)
                version = params.get("protocolVersion") if params else None
                state.requested = version if isinstance(version, str) else None
                return None
            return self._header(ctx, self._state.get(key))
        if method != "initialize" or ctx.entry.dir != "s2c":
            return None
        state = self._state.setdefault(key, _Versions())
        if ctx.kind == "error":
            error = as_dict(ctx.error)
            data = as_dict(error.get("data")) if error else None
            supported = data.get("supported") if data else None
            if isinstance(supported, list):
                state.listed = [v for v in supported if isinstance(v, str)]
                state.listed_seq = ctx.seq
            return None
        result = as_dict(ctx.result)
        answered = result.get("protocolVersion") if result else None
        if not isinstance(answered, str):
            return None  # schema.result says so
        state.negotiated = answered
        if state.listed is None:
            return None
        if answered not in state.listed:
            return [
                ctx.finding(
                    f"the server answered initialize with {answered}, not among the versions "
                    f"it listed as supported ({', '.join(state.listed)})",
                    also=[state.listed_seq],
                )
            ]
        requested = state.requested
        if requested is not None and requested in state.listed and answered != requested:
            return [
                ctx.finding(
                    f"the client asked for {requested}, which the server listed as supported, "
                    f"but the server answered {answered} (it MUST answer the same version)",
                    also=[state.listed_seq],
                )
            ]
        return None

    def _header(self, ctx: MessageContext, state: _Versions | None) -> Findings:
        header = self._headers.get(ctx.entry.ch)
        if state is None or state.negotiated is None or header is None:
            return None
        if header in (state.negotiated, state.requested):
            return None
        return [
            ctx.finding(
                f"{where(ctx)} carries MCP-Protocol-Version {header}, but the client asked for "
                f"{state.requested} and the server answered {state.negotiated}"
            )
        ]

    def on_conversation_end(self, conversation: Conversation) -> Findings:
        self._state.pop(conversation.key, None)
        return None


# -- capabilities --------------------------------------------------------------------------

#: Client requests and notifications → the server capability they need.
SERVER_CAPABILITY: dict[str, str] = {
    "tools/list": "tools",
    "tools/call": "tools",
    "prompts/list": "prompts",
    "prompts/get": "prompts",
    "resources/list": "resources",
    "resources/read": "resources",
    "resources/templates/list": "resources",
    "resources/subscribe": "resources",
    "resources/unsubscribe": "resources",
    "completion/complete": "completions",
    "logging/setLevel": "logging",
}
#: Server notifications → the server capability that announces them.
SERVER_NOTIFICATION_CAPABILITY: dict[str, str] = {
    "notifications/message": "logging",
    "notifications/tools/list_changed": "tools",
    "notifications/prompts/list_changed": "prompts",
    "notifications/resources/list_changed": "resources",
    "notifications/resources/updated": "resources",
}
#: Server requests (legacy) and client notifications → the client capability.
CLIENT_CAPABILITY: dict[str, str] = {
    "sampling/createMessage": "sampling",
    "elicitation/create": "elicitation",
    "roots/list": "roots",
    "notifications/roots/list_changed": "roots",
}


class CapabilityNotDeclared(Rule):
    id = "capability.not-declared"
    severity = "error"
    era = None
    summary = "a feature used that its owner did not declare in its capabilities"
    spec = f"{LIFECYCLE}#operation"
    kinds = frozenset({"request", "notification", "result"})

    def __init__(self) -> None:
        self._declared_at: dict[str, int] = {}  # conversation → seq of the server's capabilities

    def on_message(self, ctx: MessageContext) -> Findings:
        method = ctx.method
        key = ctx.conversation.key
        declared = ctx.conversation.declared
        if ctx.kind == "result":
            if ctx.entry.dir == "s2c" and method in ("initialize", "server/discover"):
                self._declared_at[key] = ctx.seq
            return None
        if method is None:
            return None
        if ctx.entry.dir == "c2s":
            if ctx.kind == "request" and method in SERVER_CAPABILITY:
                return self._server(ctx, method, SERVER_CAPABILITY[method], "called")
            if ctx.kind == "notification" and method in CLIENT_CAPABILITY and ctx.era == "legacy":
                return self._client(ctx, method, declared.client_capabilities)
            return None
        if ctx.kind == "notification" and method in SERVER_NOTIFICATION_CAPABILITY:
            return self._server(ctx, method, SERVER_NOTIFICATION_CAPABILITY[method], "sent")
        if ctx.kind == "request" and method in CLIENT_CAPABILITY and ctx.era == "legacy":
            return self._client(ctx, method, declared.client_capabilities)
        return None

    def _server(self, ctx: MessageContext, method: str, needed: str, verb: str) -> Findings:
        caps = as_dict(ctx.conversation.declared.server_capabilities)
        if caps is None:
            return None  # not known (yet): nothing to judge against
        source = "initialize" if ctx.era == "legacy" else "server/discover"
        at = self._declared_at.get(ctx.conversation.key, 0)
        also = [at] if at else []
        if needed not in caps:
            return [
                ctx.finding(
                    f"{method} {verb}, but the server's {source} result declares no "
                    f"`{needed}` capability",
                    also=also,
                )
            ]
        if method in ("resources/subscribe", "resources/unsubscribe"):
            resources = as_dict(caps.get("resources"))
            if resources is None or resources.get("subscribe") is not True:
                return [
                    ctx.finding(
                        f"{method} called, but the server's {source} result does not declare "
                        "`resources.subscribe`",
                        also=also,
                    )
                ]
        return None

    def _client(self, ctx: MessageContext, method: str, capabilities: Any) -> Findings:
        caps = as_dict(capabilities)
        if caps is None:
            return None
        needed = CLIENT_CAPABILITY[method]
        who = "the client's initialize request" if ctx.era == "legacy" else "the client"
        if needed not in caps:
            return [ctx.finding(f"{method} sent, but {who} declares no `{needed}` capability")]
        params = as_dict(ctx.params) or {}
        sub = as_dict(caps.get(needed)) or {}
        if method == "sampling/createMessage" and "tools" in params and "tools" not in sub:
            return [
                ctx.finding(f"tool-enabled {method} sent, but {who} declares no `sampling.tools`")
            ]
        if method == "elicitation/create":
            mode = params.get("mode", "form")
            # an empty elicitation capability means form mode only
            modes = set(sub) & {"form", "url"} or {"form"}
            if isinstance(mode, str) and mode in ("form", "url") and mode not in modes:
                return [
                    ctx.finding(
                        f"{mode}-mode {method} sent, but {who} declares no `elicitation.{mode}`"
                    )
                ]
        return None

    def on_conversation_end(self, conversation: Conversation) -> Findings:
        self._declared_at.pop(conversation.key, None)
        return None


# -- deprecated features ------------------------------------------------------------------

INCLUDE_CONTEXT_DEPRECATED_IN = "2025-11-25"
DEPRECATED_CONTEXT = frozenset({"thisServer", "allServers"})


class DeprecatedFeature(Rule):
    """Reported once per conversation and feature: the point is to see it, not count it."""

    id = "deprecated.feature"
    severity = "info"
    era = None
    summary = "a Deprecated feature in use (Roots, Sampling, Logging; `includeContext`)"
    spec = f"{MODERN_SPEC}/deprecated#deprecated"
    kinds = frozenset({"request", "notification", "result"})

    def __init__(self) -> None:
        self._seen: dict[str, set[str]] = {}

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
            if modern and ctx.entry.dir == "s2c" and ctx.entry.method == "notifications/message":
                found.append(("Logging", "the server sent notifications/message"))
        elif ctx.entry.dir == "c2s":
            if not modern or b"logLevel" not in ctx.wire:
                return None  # the common case, without a decode
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


__all__ = [
    "CapabilityNotDeclared",
    "DeprecatedFeature",
    "LifecycleEarlyRequest",
    "LifecycleInitializedMissing",
    "LifecycleNotInitializedFirst",
    "LifecycleVersionMismatch",
    "VersionDiscoverMissing",
    "VersionRemovedMethod",
    "VersionUnsupportedErrorShape",
]
