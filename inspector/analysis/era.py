"""What a conversation declares: its era, protocol version, identities, capabilities, tools.

The era is read from the traffic (docs/rules.md): a request whose ``_meta``
carries ``io.modelcontextprotocol/protocolVersion`` ≥ 2026-07-28, or a
``server/discover`` answered with a result or a recognised modern error,
makes it **modern**; an ``initialize`` makes it **legacy**, with the version
the server answered. A dual-era client's rejected ``server/discover`` probe
followed by ``initialize`` ends up legacy; every change is kept in
``changes`` so rules can tell what held when.

The era a *client* speaks is not the server's: a modern client may talk to a
legacy server, which answers under its own rules. ``server_modern`` is the
seq of the first server answer that shows the server itself is modern (a
``server/discover`` or ``subscriptions/listen`` result, a result with
``resultType``, cache hints or ``_meta`` serverInfo, a modern error code, a
subscription acknowledged or tagged);
the modern-only rules judge the server only once it is set.
"""

from __future__ import annotations

from typing import Any

from mcpeek.inspector.analysis.peek import UNSET, ErrorPeek, ParamsPeek, ResultPeek

MODERN_VERSION = "2026-07-28"
#: Modern error codes that identify a modern server when it rejects a probe.
MODERN_ERROR_CODES = frozenset({-32020, -32021, -32022})
ACKNOWLEDGED = "notifications/subscriptions/acknowledged"
#: Methods that only a modern server answers with a result.
MODERN_ONLY_METHODS = frozenset({"server/discover", "subscriptions/listen"})


def is_modern_version(version: Any) -> bool:
    return isinstance(version, str) and version >= MODERN_VERSION


class Declared:
    """The declared state of one conversation; updated as messages go by."""

    __slots__ = (
        "changes",
        "client_capabilities",
        "client_info",
        "era",
        "instructions",
        "probe_rejected",
        "protocol_version",
        "requested_version",
        "server_capabilities",
        "server_info",
        "server_modern",
        "supported_versions",
        "tools",
    )

    def __init__(self) -> None:
        self.era: str | None = None
        self.protocol_version: str | None = None
        self.requested_version: str | None = None  # what initialize asked for
        self.supported_versions: list[str] | None = None
        self.client_info: Any = None
        self.server_info: Any = None
        self.client_capabilities: Any = None
        self.server_capabilities: Any = None
        self.instructions: str | None = None
        self.tools: dict[str, Any] = {}
        self.changes: list[tuple[int, str, str | None]] = []  # (seq, era, version)
        self.server_modern: int | None = None  # seq of the server's first modern sign
        #: seq of the first error answering a server/discover probe with a code that is
        #: not a modern one (a legacy server's "method not found"…)
        self.probe_rejected: int | None = None

    def set_era(self, seq: int, era: str, version: str | None) -> None:
        if era != self.era or version != self.protocol_version:
            self.era = era
            self.protocol_version = version
            self.changes.append((seq, era, version))

    def on_client_request(self, seq: int, method: str | None, params: ParamsPeek) -> str | None:
        """Learn from a client request; returns the era the request itself speaks."""
        meta = params.meta
        if method == "initialize":
            self.requested_version = _str_or_none(params.protocol_version)
            if params.capabilities is not UNSET:
                self.client_capabilities = params.capabilities
            if params.client_info is not UNSET:
                self.client_info = params.client_info
            self.set_era(seq, "legacy", self.requested_version)
            return "legacy"
        if meta is not None and (
            (isinstance(asked := meta.protocol_version, str) and asked >= MODERN_VERSION)
            or meta.client_capabilities is not UNSET
            or (asked is UNSET and meta.client_info is not UNSET)
        ):
            # Per-request protocol fields make a modern request, even when one
            # of them is missing or wrong (that is for the meta rules to say).
            if meta.client_info is not UNSET:
                self.client_info = meta.client_info
            if meta.client_capabilities is not UNSET:
                self.client_capabilities = meta.client_capabilities
            if self.era != "legacy":
                version = (
                    asked if isinstance(asked, str) else self.protocol_version or MODERN_VERSION
                )
                if version != self.protocol_version or self.era != "modern":
                    self.set_era(seq, "modern", version)
            return "modern"
        if self.era is None and method != "server/discover":
            # A first request with no handshake and no per-request fields: a
            # legacy client that skipped initialize (the lifecycle rules say so).
            self.set_era(seq, "legacy", None)
        return self.era

    def on_result(self, seq: int, method: str | None, result: ResultPeek) -> None:
        if (
            self.server_modern is None
            and method != "initialize"  # the legacy handshake's answer shows no modern server
        ) and (
            method in MODERN_ONLY_METHODS
            or result.result_type is not UNSET
            or result.ttl_ms is not UNSET
            or result.cache_scope is not UNSET
            or (result.meta is not None and result.meta.server_info is not UNSET)
        ):
            self.server_modern = seq
        if method == "initialize":
            version = _str_or_none(result.protocol_version)
            self.set_era(seq, "legacy", version or self.requested_version)
            self._server_side(result.capabilities, result.server_info, result.instructions)
        elif method == "server/discover":
            if isinstance(result.supported_versions, list):
                self.supported_versions = [
                    v for v in result.supported_versions if isinstance(v, str)
                ]
            info = result.meta.server_info if result.meta is not None else UNSET
            if info is UNSET:
                info = result.server_info
            self._server_side(result.capabilities, info, result.instructions)
            if self.era != "legacy":
                self.set_era(seq, "modern", self.protocol_version or MODERN_VERSION)
        elif method == "tools/list" and isinstance(result.tools, list):
            for tool in result.tools:
                if isinstance(tool, dict) and isinstance(tool.get("name"), str):
                    self.tools[tool["name"]] = tool
        if result.meta is not None and result.meta.server_info is not UNSET:
            self.server_info = result.meta.server_info

    def on_server_notification(self, seq: int, method: str | None, params: ParamsPeek) -> None:
        """Subscriptions exist only in the modern revision: a server that acknowledges
        one, or tags a notification with its id, is modern."""
        if self.server_modern is None and (
            method == ACKNOWLEDGED
            or (params.meta is not None and params.meta.subscription_id is not UNSET)
        ):
            self.server_modern = seq

    def on_error(self, seq: int, method: str | None, error: ErrorPeek) -> None:
        modern_code = type(error.code) is int and error.code in MODERN_ERROR_CODES
        if self.server_modern is None and modern_code:
            self.server_modern = seq
        if method == "server/discover" and modern_code and self.era != "legacy":
            self.set_era(seq, "modern", self.protocol_version or MODERN_VERSION)

    def on_probe_error(self, seq: int, error: ErrorPeek) -> None:
        """An error answering ``server/discover``, first or not (a duplicate, a late one)."""
        modern_code = type(error.code) is int and error.code in MODERN_ERROR_CODES
        if not modern_code and self.probe_rejected is None:
            self.probe_rejected = seq

    def _server_side(self, capabilities: Any, info: Any, instructions: Any) -> None:
        if capabilities is not UNSET:
            self.server_capabilities = capabilities
        if info is not UNSET:
            self.server_info = info
        if isinstance(instructions, str):
            self.instructions = instructions


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None
