"""Following Streamable HTTP exchanges: the machinery under every ``http.*`` rule.

An *exchange* is one HTTP request and its response. The capture records it
as ``http`` records (``request``, ``response``, ``end``; headers in order)
with an exchange id ``x``, and the JSON-RPC messages it carried as ``msg``
records whose ``ch`` is that id. :class:`HttpRule` keeps an :class:`Exchange`
from its ``request`` to its ``end`` (at most :data:`MAX_EXCHANGES` open) and
hands it to the hooks a rule overrides (the exchange itself, and the constants
the rules share, are in :mod:`~mcpeek.rules.families._http_exchange_state`).

Timing. The Analyzer correlates a client's message as soon as it is recorded
(so that a call the server holds is in flight), usually before its
exchange's response head, which says the status and headers most rules
check. :meth:`HttpRule.on_message` therefore keeps a client message that
comes before the head with its exchange, and :meth:`HttpRule.heard` (the
shared bookkeeping, then :meth:`HttpRule.judge`) sees it when the head
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
last seen for the exchange's conversation (:meth:`HttpRule.era_of`) in
``on_record``.

HTTP+SSE. Traffic of the deprecated HTTP+SSE transport (2024-11-05: a
request POST answered ``202``, the response arriving on a GET stream) is not
judged by the Streamable HTTP rules: once seen, :attr:`HttpRule.old_sse`
stays set.

Cost. Every HTTP rule follows the exchanges itself (the engine instantiates
each rule alone and gives it no place shared with the others), so an
exchange parses its header lists lazily, on a rule's first look, and the
bounded memories are refreshed only when they change.
"""

from __future__ import annotations

from typing import ClassVar, TypeVar

from mcpeek.inspector.analysis import Conversation
from mcpeek.inspector.records import Http, Msg, Record
from mcpeek.rules.base import Era, Finding, Findings, LateFinding, Rule
from mcpeek.rules.context import MessageContext
from mcpeek.rules.families._bounded import MAX_CONVERSATIONS, Lru
from mcpeek.rules.families._http_exchange_state import ORIGIN, Exchange
from mcpeek.rules.families._messages import shown

MAX_EXCHANGES = 1024

K = TypeVar("K")
V = TypeVar("V")


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


def refresh(memory: Lru[K, V], key: K, value: V) -> None:
    """``memory.put(key, value)``, skipped when that is already the newest entry."""
    if memory and next(reversed(memory)) == key and memory[key] == value:
        return
    memory.put(key, value)


def _has_body(record: Http) -> bool:
    return bool(record.body) or bool(record.body_b64)


class HttpRule(Rule):
    """Base of the Streamable HTTP rules: follows the exchanges, gates on ``catalog_era``."""

    #: the era docs/rules.md gives the rule (the engine cannot gate ``http`` records: see above)
    catalog_era: ClassVar[Era | None] = None
    transport = "http"
    record_types = frozenset({Http})

    def __init__(self) -> None:
        self.exchanges: Lru[str, Exchange] = Lru(MAX_EXCHANGES)
        self.eras: Lru[str, str | None] = Lru(MAX_CONVERSATIONS)
        self.endpoints: Lru[str, None] = Lru(16)  # paths that carried JSON-RPC POSTs
        self.old_sse = False  # HTTP+SSE (2024-11-05) traffic seen: not Streamable HTTP

    # -- following the exchanges -------------------------------------------------------
    def on_record(self, record: Record, conversation: Conversation | None) -> Findings:
        if isinstance(record, Http):
            if record.phase == "request":
                opened = Exchange(record)
                self.exchanges.put(record.x, opened)
                return self.on_http_request(opened)
            exchange = self.exchanges.get(record.x)
            if exchange is None:
                return None
            exchange.with_body = exchange.with_body or _has_body(record)
            if record.phase == "response":
                exchange.respond(record)
                found = self.on_http_response(exchange)
                return self._judge_waiting(exchange, found) if exchange.waiting else found
            if record.phase == "end":
                del self.exchanges[record.x]
                # no response head came (the client gave up): judged with no status
                late = self._judge_waiting(exchange, None) if exchange.waiting else None
                found = self.on_http_end(exchange)
                return late if not found else [*(late or ()), *found]
        elif isinstance(record, Msg) and record.dir == "s2c" and record.ch != "stdio":
            # Only rules whose ``record_types`` include Msg get here (notification-status).
            carrier = self.exchanges.get(record.ch)
            if carrier is not None:
                carrier.s2c += 1
        return None

    def on_message(self, ctx: MessageContext) -> Findings:
        exchange = self.exchanges.get(ctx.entry.ch)
        if exchange is None:
            return None
        if ctx.entry.dir == "c2s" and exchange.resp_seq is None:
            # Judged when the response head arrives (what most rules check is in it).
            exchange.waiting.append(ctx.later)
            return None
        return self.heard(ctx, exchange)

    def on_proxy_answered(self, exchange: str) -> Findings:
        # mcpeek answered (no server did): judged with no status, like a client that gave up
        closed = self.exchanges.pop(exchange, None)
        return self._judge_waiting(closed, None) if closed and closed.waiting else None

    def on_conversation_end(self, conversation: Conversation) -> Findings:
        # The capture ended before these exchanges' response heads: judged with no status.
        late: list[Finding] = []
        for exchange in self.exchanges.values():
            if any(ctx.conversation is conversation for ctx in exchange.waiting):
                late.extend(self._judge_waiting(exchange, None, conversation))
        return late or None

    def _judge_waiting(
        self, exchange: Exchange, found: Findings, conversation: Conversation | None = None
    ) -> list[Finding]:
        """The messages that waited for ``exchange``'s response head (only those of
        ``conversation`` if given), judged now, after ``found``."""
        out = list(found or ())
        now, exchange.waiting = exchange.waiting, []
        if conversation is not None:
            exchange.waiting = [c for c in now if c.conversation is not conversation]
            now = [c for c in now if c.conversation is conversation]
        for ctx in now:
            for finding in self.heard(ctx, exchange) or ():
                out.append(LateFinding(finding.msgs, finding.message, finding.severity, about=ctx))
        return out

    def heard(self, ctx: MessageContext, exchange: Exchange) -> Findings:
        """A message of ``exchange``, once its response head is known (or known never to
        come): the bookkeeping every HTTP rule shares, then :meth:`judge`."""
        refresh(self.eras, ctx.conversation.key, ctx.era)
        if ctx.entry.dir == "c2s":
            exchange.conversation = ctx.conversation.key
            exchange.era = ctx.era
            if ctx.kind == "request":
                exchange.has_request = True
                if exchange.status == 202 and exchange.s2c == 0:
                    self.old_sse = True  # the answer will come on another stream
            self.note_endpoint(exchange)
        if self.old_sse or (ctx.version is not None and ctx.version < "2025-03-26"):
            return None
        if self.catalog_era is not None and ctx.era != self.catalog_era:
            return None
        return self.judge(ctx, exchange)

    def note_endpoint(self, exchange: Exchange) -> None:
        """A client message came on this exchange: a POST's path is the MCP endpoint."""
        if exchange.method == "POST" and exchange.path is not None:
            refresh(self.endpoints, exchange.path, None)

    def era_of(self, exchange: Exchange) -> str | None:
        """The era last seen in the exchange's conversation (for ``on_record`` judgments)."""
        if exchange.era is not None:
            return exchange.era
        key = exchange.session_key
        return self.eras.get(key) if key in self.eras else self.eras.get(ORIGIN)

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
        if ctx.entry.dir != "c2s" or exchange.method != "POST" or exchange.judged:
            return False
        exchange.judged = True
        return True

    @staticmethod
    def on_post(ctx: MessageContext, exchange: Exchange, message: str) -> list[Finding]:
        """A finding on the client's message, after the POST that carried it."""
        return [ctx.finding(message, also=[exchange.seq])]
