"""Capabilities: a feature used that its owner did not declare.

The capabilities both sides declared (legacy: in the ``initialize``
handshake; modern: the server's ``server/discover`` result) say which
requests and notifications each side may send.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from mcpeek.inspector.analysis import Conversation
from mcpeek.inspector.analysis.capabilities import (
    CLIENT_CAPABILITY,
    SERVER_CAPABILITY,
    SERVER_NOTIFICATION_CAPABILITY,
)
from mcpeek.rules.base import LEGACY_SPEC, Findings, Rule
from mcpeek.rules.context import MessageContext
from mcpeek.rules.families._wire import as_dict

LIFECYCLE = f"{LEGACY_SPEC}/basic/lifecycle"


SERVER_DECLARED = frozenset({"server_capabilities"})


class CapabilityNotDeclared(Rule):
    id = "capability.not-declared"
    severity = "error"
    era = None
    summary = "a feature used that its owner did not declare in its capabilities"
    spec = f"{LIFECYCLE}#operation"
    kinds = frozenset({"request", "notification", "result"})
    #: Of the results, only the server's capabilities are remembered.
    kind_methods: ClassVar[Mapping[str, frozenset[str]]] = {
        "result": frozenset({"initialize", "server/discover"})
    }
    directions: ClassVar[Mapping[str, str]] = {"result": "s2c"}
    #: Only these methods are judged (or, for the results, remembered).
    methods = frozenset(
        {
            *SERVER_CAPABILITY,
            *SERVER_NOTIFICATION_CAPABILITY,
            *CLIENT_CAPABILITY,
            "initialize",
            "server/discover",
        }
    )

    def __init__(self) -> None:
        self._declared_at: dict[str, int] = {}  # conversation → seq of the server's capabilities

    @classmethod
    def facts_needed(
        cls, kind: str, method: str | None, era: str | None, direction: str
    ) -> frozenset[str]:
        # (what needs a server capability is judged only once the server declared some)
        if (kind == "request" and direction == "c2s" and method in SERVER_CAPABILITY) or (
            kind == "notification"
            and direction == "s2c"
            and method in SERVER_NOTIFICATION_CAPABILITY
        ):
            return SERVER_DECLARED
        return frozenset()

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
        if needed in caps and method not in ("resources/subscribe", "resources/unsubscribe"):
            return None  # the common case: declared
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
