"""Following Streamable HTTP exchanges: the machinery under every ``http.*`` rule.

An *exchange* is one HTTP request and its response. The capture records it
as ``http`` records (``request``, ``response``, ``end``; headers in order)
with an exchange id ``x``, and the JSON-RPC messages it carried as ``msg``
records whose ``ch`` is that id. The engine's HTTP rules share one
:class:`~mcpeek.rules.families._http_tracker.ExchangeTracker`, which keeps an
:class:`Exchange` from its ``request`` to its ``end`` (at most
:data:`~mcpeek.rules.families._http_tracker.MAX_EXCHANGES` open); :class:`HttpRule`
hands it to the hooks a rule overrides (the exchange itself, and the constants
the rules share, are in :mod:`~mcpeek.rules.families._http_exchange_state`).

Timing. The Analyzer correlates a client's message as soon as it is recorded
(so that a call the server holds is in flight), usually before its
exchange's response head, which says the status and headers most rules
check. The tracker therefore keeps a client message that comes before the
head with its exchange, and :meth:`HttpRule.heard` (the
HTTP+SSE and era gates, then :meth:`HttpRule.judge`) sees it when the head
arrives: every rule judges a message knowing its response head, whatever the
server's timing. If no head ever comes (the client gave up, mcpeek answered
itself, the capture ended), the message is judged with no status: the rules
about what the client sent still find, those about the answer find nothing.
Such findings reach the engine as :class:`~mcpeek.rules.base.LateFinding`,
reported on the kept message, its flow and its conversation.

Era gating. The engine gates a rule's hooks on the conversation's era, but an
``http`` record reaches ``on_record`` with no conversation (its session is
known only from the response), so a rule declaring ``era = "modern"`` would
never see one. The HTTP rules therefore declare ``era = None`` to the engine
and gate themselves on ``catalog_era`` (the era docs/rules.md gives them): on the
message's era in ``on_message`` (which honours ``--spec``), and on the era
last seen for the exchange's conversation
(:meth:`~mcpeek.rules.families._http_tracker.ExchangeTracker.era_of`) in ``on_record``.

HTTP+SSE. Traffic of the deprecated HTTP+SSE transport (2024-11-05: a
request POST answered ``202``, the response arriving on a GET stream) is not
judged by the Streamable HTTP rules: once seen, the tracker's ``old_sse``
stays set.

Cost. The tracker follows each exchange once for all the rules, and parses its
header lists once, as they come (every exchange's are read); the bounded
memories are refreshed only when they change. The engine calls a rule only on the ``http``
records it has a hook for (``record_phases``, set here from the hooks a rule
overrides) and on the messages its ``kinds`` and ``directions`` name.
"""

from __future__ import annotations

from typing import Any, ClassVar

from mcpeek.inspector.analysis import Conversation
from mcpeek.inspector.records import Http, Record
from mcpeek.rules.base import Era, Finding, Findings, LateFinding, Rule
from mcpeek.rules.context import MessageContext
from mcpeek.rules.families._http_exchange_state import Exchange, refresh
from mcpeek.rules.families._http_tracker import ExchangeTracker, Heard
from mcpeek.rules.families._messages import shown

MESSAGE_KINDS = ("request", "notification", "result", "error", "invalid")

# Re-exported: where the rules found it before the tracker.
__all__ = ["HttpRule", "described", "post_without", "refresh", "what"]


def described(name: str, value: str | None, limit: int) -> str:
    """``no Accept header`` or ``Accept "…"``, for a finding's message."""
    return f"no {name} header" if value is None else f"{name} {shown(value, limit)}"


def post_without(ctx: MessageContext, header: str) -> str:
    """``POST carrying tools/call (id 3) has no Mcp-Method header``."""
    return f"POST carrying {what(ctx)} has no {header} header"


def what(ctx: MessageContext) -> str:
    """``tools/call (id 3)``, ``notifications/initialized``, ``a response (id 3)``."""
    ident = shown(ctx.entry.id, 40)
    if ctx.kind == "request":
        return f"{ctx.method} (id {ident})"
    if ctx.kind == "notification":
        return str(ctx.method)
    if ctx.is_response:
        return f"the response to {ctx.method} (id {ident})" if ctx.method else "a response"
    return "an invalid message"


class HttpRule(Rule):
    """Base of the Streamable HTTP rules: reads the shared exchanges, gates on ``catalog_era``."""

    #: the era docs/rules.md gives the rule (the engine cannot gate ``http`` records: see above)
    catalog_era: ClassVar[Era | None] = None
    #: the kinds of client message the rule judges (from ``kinds`` and ``directions``)
    client_kinds: ClassVar[frozenset[str]] = frozenset()
    #: the rule's ``judge`` is silent on a kept client message that
    #: :func:`~mcpeek.rules.families._http_quiet.quiet` passes, and that check does what
    #: it would have done meanwhile (set on the class itself: a subclass must vouch anew)
    head_gated: ClassVar[bool] = False
    #: the rule's hooks on a response head are silent, with nothing to remember, where
    #: :func:`~mcpeek.rules.families._http_quiet.quiet_head` says so (set on the class
    #: itself, as ``head_gated``); a rule that judges heads and does not vouch for it is
    #: called on those heads too (``quiet-response`` among its ``record_phases``)
    quiet_head: ClassVar[bool] = False
    #: the methods of the requests ``on_http_request`` judges (``None``: all): without
    #: ``POST``, the engine does not call it on a POST's (most of them)
    request_methods: ClassVar[frozenset[str] | None] = None
    transport = "http"
    record_types = frozenset({Http})

    def __init__(self) -> None:
        # its own until the engine hands round the one its HTTP rules share (share())
        self.tracker = ExchangeTracker()

    def share(self, shared: dict[type, Any]) -> None:
        self.tracker = shared.setdefault(ExchangeTracker, self.tracker)
        self.tracker.join(self)

    def ungate(self) -> None:
        self.tracker.checked = False  # every rule judges every kept message

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        cls.head_gated = cls.__dict__.get("head_gated", False)
        cls.quiet_head = cls.__dict__.get("quiet_head", False)
        # The kept client messages a rule judges: those the engine would call its
        # on_message on (its kinds, and its directions: kept messages are the client's).
        cls.client_kinds = frozenset(
            kind
            for kind in MESSAGE_KINDS
            if (cls.kinds is None or kind in cls.kinds) and cls.directions.get(kind, "c2s") == "c2s"
        )
        # The engine calls a rule only on the records it has something to do with.
        # (late-: the tracker held client messages for that head or end, to judge now)
        judges = cls.judge is not HttpRule.judge or cls.heard is not HttpRule.heard
        phases = {"late-response", "late-end"} if judges and cls.client_kinds else set()
        if cls.on_http_request is not HttpRule.on_http_request:
            phases.add("request")
            if cls.request_methods is None or "POST" in cls.request_methods:
                phases.add("post-request")
        if cls.on_http_response is not HttpRule.on_http_response:
            phases |= {"response", "late-response"}
        if cls.on_http_end is not HttpRule.on_http_end:
            phases |= {"end", "late-end"}
        if phases & {"response", "late-response"} and not (cls.head_gated or cls.quiet_head):
            phases.add("quiet-response")
        cls.record_phases = frozenset(phases)

    # -- following the exchanges (the tracker did, just before) ------------------------
    def on_record(self, record: Record, conversation: Conversation | None) -> Findings:
        tracker = self.tracker
        exchange = tracker.current
        if exchange is None or not isinstance(record, Http):
            return None
        phase = record.phase  # (the tracker's late- phases: the same hooks)
        if phase == "request":
            return self.on_http_request(exchange)
        late = tracker.late
        if phase == "response":
            found = self.on_http_response(exchange)
            return self._judge_late(exchange, late, found) if late else found
        # no response head came (the client gave up): judged with no status
        judged = self._judge_late(exchange, late, None) if late else None
        found = self.on_http_end(exchange)
        return judged if not found else [*(judged or ()), *found]

    def on_message(self, ctx: MessageContext) -> Findings:
        exchange = self.tracker.now
        if exchange is None:
            return None  # not on an exchange, or kept until its head comes
        return self.heard(ctx, exchange, self.tracker.passed)

    def on_proxy_answered(self, exchange: str) -> Findings:
        # mcpeek answered (no server did): judged with no status, like a client that gave up
        closed, late = self.tracker.answered(exchange)
        return self._judge_late(closed, late, None) if closed and late else None

    def on_conversation_end(self, conversation: Conversation) -> Findings:
        # The capture ended before these exchanges' response heads: judged with no status.
        judged: list[Finding] = []
        for exchange, late in self.tracker.ending(conversation):
            judged.extend(self._judge_late(exchange, late, None) or ())
        return judged or None

    def _judge_late(self, exchange: Exchange, late: list[Heard], found: Findings) -> Findings:
        """The messages that waited for ``exchange``'s response head, judged now, after
        ``found``."""
        out = found
        kinds, methods = self.client_kinds, self.kind_methods
        for ctx, passed in late:
            kind = ctx.kind
            if kind not in kinds or (kind in methods and ctx.method not in methods[kind]):
                continue  # (as the engine would not call on_message on it)
            judged = self.heard(ctx, exchange, passed)
            if judged:
                out = list(out or ())
                for finding in judged:
                    out.append(
                        LateFinding(finding.msgs, finding.message, finding.severity, about=ctx)
                    )
        return out

    def heard(self, ctx: MessageContext, exchange: Exchange, passed: bool) -> Findings:
        """A message of ``exchange``, once its response head is known (or known never to
        come) and the tracker took it into account (``passed``: the traffic was still
        Streamable HTTP then): the gates every HTTP rule shares, then :meth:`judge`."""
        if not passed or (ctx.version is not None and ctx.version < "2025-03-26"):
            return None
        if self.catalog_era is not None and ctx.era != self.catalog_era:
            return None
        return self.judge(ctx, exchange)

    # -- what subclasses override -----------------------------------------------------
    def judge(self, ctx: MessageContext, exchange: Exchange) -> Findings:
        return None

    def on_http_request(self, exchange: Exchange) -> Findings:
        return None

    def on_http_response(self, exchange: Exchange) -> Findings:
        return None

    def on_http_end(self, exchange: Exchange) -> Findings:
        return None

    # -- helpers for the rules ----------------------------------------------------------
    def first_post(self, ctx: MessageContext, exchange: Exchange) -> bool:
        """The first client message of a POST (a 2025-03-26 batch is judged once)."""
        if ctx.entry.dir != "c2s" or exchange.method != "POST" or self.id in exchange.judged:
            return False
        exchange.judged.add(self.id)
        return True

    @staticmethod
    def on_post(ctx: MessageContext, exchange: Exchange, message: str) -> list[Finding]:
        """A finding on the client's message, after the POST that carried it."""
        return [ctx.finding(message, also=[exchange.seq])]
