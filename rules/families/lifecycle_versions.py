"""The legacy lifecycle's version negotiation (2025-11-25 and earlier).

The client names a version in ``initialize``; the server answers with it, or
with another it supports (after an error listing those it does, the answer must
be one of them), and over HTTP every later request carries the negotiated
version in ``MCP-Protocol-Version``. The handshake's order is checked in
``lifecycle.py``.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from typing import ClassVar

from mcpeek.inspector.analysis import Conversation
from mcpeek.inspector.records import Http, Record
from mcpeek.rules.base import Era, Findings, Rule
from mcpeek.rules.context import MessageContext
from mcpeek.rules.families._wire import WINDOW, as_dict, where
from mcpeek.rules.families.lifecycle import LIFECYCLE


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
    #: the era docs/rules.md gives the rule (the engine cannot gate it: see the docstring)
    catalog_era: ClassVar[Era] = "legacy"
    summary = "the `initialize` versions do not agree with what either side offered"
    spec = f"{LIFECYCLE}#version-negotiation"
    kinds = frozenset({"request", "result", "error"})
    directions: ClassVar[Mapping[str, str]] = {"request": "c2s", "result": "s2c", "error": "s2c"}
    message_eras = frozenset({"legacy"})  # (its HTTP records come before any era)

    record_types = frozenset({Http})
    # (the request's header and the end that forgets it: not the response head, which
    # is most of the HTTP records the engine would call it on)
    record_phases = frozenset({"request", "post-request", "end", "late-end"})

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
                # (the length first: it rules out the other headers without lowering them)
                if len(name) == 20 and name.lower() == "mcp-protocol-version":
                    self._headers[record.x] = value
                    if len(self._headers) > WINDOW:
                        self._headers.popitem(last=False)
                    break
        return None

    def on_message(self, ctx: MessageContext) -> Findings:
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
        if ctx.conversation.shared_origin:
            # No session id: several clients may share the origin, and nothing ties
            # this request to the initialize seen (another client may have sent it).
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
