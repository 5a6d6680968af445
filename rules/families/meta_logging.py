"""Per-request logging (modern): log messages go only to requests that asked for them.

A request asks for log messages with ``_meta["io.modelcontextprotocol/logLevel"]``;
a server's ``notifications/message`` belongs to one such request.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from mcpeek.inspector.analysis import Attempt, Entry, Flow
from mcpeek.inspector.analysis.peek import UNREAD
from mcpeek.rules.base import MODERN_SPEC, Findings, Rule
from mcpeek.rules.context import MessageContext
from mcpeek.rules.families._server import MCP, shorten

LOGGING = f"{MODERN_SPEC}/server/utilities/logging"
LOG_LEVEL = MCP + "logLevel"


# -- logging ------------------------------------------------------------------------------
RECENT_LOOKBACK = 16


IN_FLIGHT_LOOKUP = 64


def _owner(flow: Flow, entry: Entry) -> Attempt:
    """The attempt of an MRTR chain a log message belongs to (its HTTP stream, or the last)."""
    if entry.ch != "stdio":
        for attempt in reversed(flow.attempts):
            if attempt.request.ch == entry.ch:
                return attempt
    return flow.attempts[-1]


def _asked(attempt: Attempt) -> bool:
    """Whether the request of ``attempt`` set a (non-null) log level, as correlation read
    its ``_meta`` (``Attempt.log_level``); one it could not read may have (no finding)."""
    return attempt.log_level is True or attempt.log_level is UNREAD


class LogWithoutLevel(Rule):
    """A log message goes only to a request that set a log level.

    Whether a request set one is what correlation read of its ``_meta`` and keeps on
    its attempt (``Attempt.log_level``), so the rule needs no look at requests: once a
    flow has ended, a streaming analyzer forgets its bytes, and a log message may come
    late (an HTTP stream, or stdio after the answer).
    """

    id = "meta.log-without-level"
    severity = "error"
    era = "modern"
    summary = (
        "`notifications/message` for a request that carried no `io.modelcontextprotocol/logLevel`"
    )
    spec = f"{LOGGING}#per-request-log-level"
    kinds = frozenset({"notification"})
    directions: ClassVar[Mapping[str, str]] = {"notification": "s2c"}
    kind_methods: ClassVar[Mapping[str, frozenset[str]]] = {
        "notification": frozenset({"notifications/message"})
    }

    def on_message(self, ctx: MessageContext) -> Findings:
        if ctx.entry.method != "notifications/message" or ctx.entry.dir != "s2c":
            return None
        flow = ctx.flow
        if flow.method == "subscriptions/listen":
            return None  # subscription.request-scoped says so
        if flow.orphan is None and flow.sender == "c2s" and flow.attempts:
            attempt = _owner(flow, ctx.entry)
            if _asked(attempt):
                return None
            return [
                ctx.finding(
                    f"log message for {flow.method} (id {shorten(attempt.request.id)}), "
                    f"whose request set no {LOG_LEVEL}",
                    also=[attempt.request.seq],
                )
            ]
        return self._unattributed(ctx)

    def _unattributed(self, ctx: MessageContext) -> Findings:
        conversation = ctx.conversation
        in_flight = [
            attempt
            for (side, _), (flow, attempt) in conversation.in_flight.items()
            if side == "c2s" and flow.method != "subscriptions/listen"
        ]
        if in_flight:
            if any(_asked(a) for a in in_flight[:IN_FLIGHT_LOOKUP]):
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
                if _asked(attempt):
                    return None  # late, but for a request that asked for logs
                break
        return [ctx.finding(f"log message with no request in flight that set {LOG_LEVEL}")]
