"""Per-request logging (modern): log messages go only to requests that asked for them.

A request asks for log messages with ``_meta["io.modelcontextprotocol/logLevel"]``;
a server's ``notifications/message`` belongs to one such request.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from typing import ClassVar

from mcpeek.inspector.analysis import Attempt, Conversation, Entry, Flow
from mcpeek.inspector.analysis.peek import UNSET
from mcpeek.rules.base import MODERN_SPEC, Findings, Rule
from mcpeek.rules.context import MessageContext
from mcpeek.rules.families._server import (
    MCP,
    UNREADABLE,
    MetaMemberPeek,
    may_hold,
    peeked_params,
    shorten,
    unread,
)

LOGGING = f"{MODERN_SPEC}/server/utilities/logging"
LOG_LEVEL = MCP + "logLevel"


# -- logging ------------------------------------------------------------------------------
RECENT_LOOKBACK = 16


IN_FLIGHT_LOOKUP = 64


LEVELS_LIMIT = 4096


def _owner(flow: Flow, entry: Entry) -> Attempt:
    """The attempt of an MRTR chain a log message belongs to (its HTTP stream, or the last)."""
    if entry.ch != "stdio":
        for attempt in reversed(flow.attempts):
            if attempt.request.ch == entry.ch:
                return attempt
    return flow.attempts[-1]


#: Reads just ``params._meta[logLevel]``.
_PEEK = MetaMemberPeek(LOG_LEVEL)


def _sets_level(ctx: MessageContext) -> bool:
    """Whether a request's ``params._meta`` carries a (non-null) log level."""
    known = peeked_params(ctx)
    if known is not None:  # what correlation read of params._meta: no look at the text
        peeked = known.meta
        level = peeked.log_level if peeked is not None else UNSET
        return level is not UNSET and level is not None
    record = ctx.entry.record
    if unread(ctx, "meta"):
        if not may_hold(record, "logLevel"):
            return False  # most requests: not even the word, no decode at all
        raw = record.raw
        if raw is not None and raw[:1] == "{":
            return _peek_level(raw, ctx)
    meta = ctx.meta
    return meta is not None and meta.get(LOG_LEVEL) is not None


def _peek_level(raw: str, ctx: MessageContext) -> bool:
    """One object (not a batch): read just its level. What the peek cannot read
    (params or _meta not an object…) is left to ``ctx.meta``."""
    level = _PEEK.read(raw)
    if level is UNREADABLE:
        meta = ctx.meta
        return meta is not None and meta.get(LOG_LEVEL) is not None
    return level is not None


class LogWithoutLevel(Rule):
    """A log message goes only to a request that set a log level.

    Whether a request set one is noted as it goes by (by seq, a bounded window):
    once a flow has ended, a streaming analyzer forgets its bytes, and a log
    message may come late (an HTTP stream, or stdio after the answer).
    """

    id = "meta.log-without-level"
    severity = "error"
    era = "modern"
    summary = (
        "`notifications/message` for a request that carried no `io.modelcontextprotocol/logLevel`"
    )
    spec = f"{LOGGING}#per-request-log-level"
    kinds = frozenset({"request", "notification"})
    directions: ClassVar[Mapping[str, str]] = {"request": "c2s", "notification": "s2c"}
    kind_methods: ClassVar[Mapping[str, frozenset[str]]] = {
        "notification": frozenset({"notifications/message"})
    }

    def __init__(self) -> None:
        self.levels: dict[str, OrderedDict[int, bool]] = {}

    def on_message(self, ctx: MessageContext) -> Findings:
        if ctx.kind == "request":
            entry = ctx.entry
            if entry.dir == "c2s":
                self._note(ctx.conversation.key, entry.seq, _sets_level(ctx))
            return None
        if ctx.entry.method != "notifications/message" or ctx.entry.dir != "s2c":
            return None
        flow = ctx.flow
        if flow.method == "subscriptions/listen":
            return None  # subscription.request-scoped says so
        if flow.orphan is None and flow.sender == "c2s" and flow.attempts:
            attempt = _owner(flow, ctx.entry)
            if self._level(ctx.conversation.key, attempt.request) is not False:
                return None
            return [
                ctx.finding(
                    f"log message for {flow.method} (id {shorten(attempt.request.id)}), "
                    f"whose request set no {LOG_LEVEL}",
                    also=[attempt.request.seq],
                )
            ]
        return self._unattributed(ctx)

    def _note(self, key: str, seq: int, asked: bool) -> None:
        levels = self.levels.get(key)
        if levels is None:
            levels = self.levels[key] = OrderedDict()
        levels[seq] = asked
        if len(levels) > LEVELS_LIMIT:
            levels.popitem(last=False)

    def _level(self, key: str, request: Entry) -> bool | None:
        """Did ``request`` set a log level? ``None``: not known any more."""
        levels = self.levels.get(key)
        return levels.get(request.seq) if levels is not None else None

    def _unattributed(self, ctx: MessageContext) -> Findings:
        conversation = ctx.conversation
        key = conversation.key
        in_flight = [
            attempt
            for (side, _), (flow, attempt) in conversation.in_flight.items()
            if side == "c2s" and flow.method != "subscriptions/listen"
        ]
        if in_flight:
            if any(self._level(key, a.request) is not False for a in in_flight[:IN_FLIGHT_LOOKUP]):
                return None  # it may belong to one of them
            if len(in_flight) == 1:  # the only candidate: name it
                (attempt,) = in_flight
                return [
                    ctx.finding(
                        f"log message while only {attempt.request.method} (id "
                        f"{shorten(attempt.request.id)}) was in flight, whose request set no "
                        f"{LOG_LEVEL}",
                        also=[attempt.request.seq],
                    )
                ]
            return [
                ctx.finding(
                    f"log message while none of the {len(in_flight)} requests in flight "
                    f"set {LOG_LEVEL}"
                )
            ]
        for looked, ((side, _), (flow, attempt)) in enumerate(
            reversed(conversation.recent.items())
        ):
            if looked >= RECENT_LOOKBACK:
                break
            if side == "c2s" and flow.method != "subscriptions/listen":
                if self._level(key, attempt.request) is not False:
                    return None  # late, but for a request that asked for logs
                break
        return [ctx.finding(f"log message with no request in flight that set {LOG_LEVEL}")]

    def on_conversation_end(self, conversation: Conversation) -> Findings:
        self.levels.pop(conversation.key, None)
        return None
