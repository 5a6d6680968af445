"""The HTTP exchanges of one rule engine, followed once for all the ``http.*`` rules.

Every :class:`~mcpeek.rules.families._http_exchanges.HttpRule` of an engine
reads the same :class:`ExchangeTracker` (the engine hands it round with
:meth:`~mcpeek.rules.base.Rule.share`): the open exchanges, each with its
request and response head parsed once, and what the client messages taught
(the era of each conversation, the MCP endpoints, whether the traffic is the
deprecated HTTP+SSE transport). Before it, each of the 14 rules followed every
exchange with its own copy, which was most of the rules' cost per exchange.

The tracker is a :class:`~mcpeek.rules.base.Follower`: the engine gives it
every ``http`` record and every message of the HTTP transport before the
rules' hooks, so a rule is called only on what it judges (its ``kinds``,
``directions`` and ``record_phases``). A message that comes before its
exchange's response head (see :mod:`~mcpeek.rules.families._http_exchanges`)
is kept (what the rules read of it, not its bytes:
:mod:`~mcpeek.rules.families._http_kept`), heard once when the head (or the end)
comes, and every rule judges it with what the tracker knew then (:data:`Heard`).
For the hooks the engine runs rule by rule (an exchange mcpeek answered, a
conversation's end), the first rule's call works it out and the others' read it
back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcpeek.inspector.analysis import Conversation
from mcpeek.inspector.records import Http, Msg, Record
from mcpeek.rules.base import Follower
from mcpeek.rules.context import MessageContext
from mcpeek.rules.families._bounded import MAX_CONVERSATIONS, Lru
from mcpeek.rules.families._http_exchange_state import ORIGIN, Exchange, refresh
from mcpeek.rules.families._http_kept import keep
from mcpeek.rules.families._http_quiet import Accepts, quiet, quiet_head

if TYPE_CHECKING:
    from mcpeek.rules.families._http_exchanges import HttpRule

MAX_EXCHANGES = 1024

#: a message judged after its hook, and whether the HTTP+SSE gate let it through then
Heard = tuple[MessageContext, bool]


class ExchangeTracker(Follower):
    """The open exchanges and what the client messages on them showed, for every rule."""

    transport = "http"
    record_types = frozenset({Http, Msg})

    def __init__(self) -> None:
        self.exchanges: Lru[str, Exchange] = Lru(MAX_EXCHANGES)
        self.eras: Lru[str, str | None] = Lru(MAX_CONVERSATIONS)
        self.endpoints: Lru[str, None] = Lru(16)  # paths that carried JSON-RPC POSTs
        # What note() refreshed last in ``eras`` and ``endpoints`` (only it writes them):
        # still their newest entries, so refreshing them again would change nothing.
        self._era_of: tuple[str, str | None] | None = None
        self._endpoint: str | None = None
        self.old_sse = False  # HTTP+SSE (2024-11-05) traffic seen: not Streamable HTTP
        #: the exchange of the record last followed (``None``: not one that is open)
        self.current: Exchange | None = None
        #: the client messages that waited for ``current``'s head (or its end), heard now
        self.late: list[Heard] = []
        #: the exchange of the message last followed, if the rules judge it now (not
        #: kept for its head), and whether the traffic was still Streamable HTTP then
        self.now: Exchange | None = None
        self.passed = False
        self._ended: Conversation | None = None
        self._ended_late: list[tuple[Exchange, list[Heard]]] = []
        self._answered: tuple[str, Exchange | None, list[Heard]] | None = None
        #: whether :func:`quiet` stands for every rule it would let the engine skip
        #: (:meth:`join`); off in the verifying engine's twin
        self.checked = True
        self._accepts = Accepts()

    def join(self, rule: HttpRule) -> None:
        """``rule`` reads this tracker: a rule that judges the client messages kept for a
        response head, and not the head itself, is skipped on a head :func:`quiet`
        passes, so that check is used only if it vouches for every such rule."""
        self.readers = self.readers | {rule}
        phases = rule.record_phases or ()
        if "late-response" in phases and "response" not in phases and not rule.head_gated:
            self.checked = False

    # -- records -----------------------------------------------------------------------
    def on_record(self, record: Record) -> str | None:
        self._answered = None
        # Heard at the last record only: kept past it, a 16 MB request judged at its head
        # would stay in memory while its 16 MB answer is read.
        self.late = []
        if isinstance(record, Http):
            self.follow(record)
            # the rules that judge messages are wanted at a head or end only if some waited,
            # and at a head not if it proves them silent on the one that did (_http_quiet)
            late = self.late
            if not late:
                if record.phase != "request":
                    return None
                # (a POST's: the rules that judge only GET or DELETE requests skip it)
                post = self.current is not None and self.current.method == "POST"
                return "post-request" if post else None
            exchange = self.current
            if (
                len(late) == 1
                and record.phase == "response"
                and self.checked
                and exchange is not None
            ):
                ctx, passed = late[0]
                if quiet(exchange, ctx, passed, self._accepts):
                    return "quiet-response" if quiet_head(exchange, ctx) else None
            return "late-" + record.phase
        if isinstance(record, Msg) and record.dir == "s2c":
            # the server's messages on an exchange (for http.notification-status)
            carrier = self.exchanges.get(record.ch)
            if carrier is not None:
                carrier.s2c += 1
        return None

    def follow(self, record: Http) -> None:
        """``current``: the exchange ``record`` is about, once it is taken into account."""
        if record.phase == "request":
            self.current = Exchange(record)
            self.exchanges.put(record.x, self.current)
            return
        exchange = self.current = self.exchanges.get(record.x)
        if exchange is None:
            return
        if not exchange.with_body and (record.body or record.body_b64):
            exchange.with_body = True
        if record.phase == "response":
            exchange.respond(record)
        else:  # "end"
            del self.exchanges[record.x]
        if exchange.waiting:  # judged now: with the status, or known never to have one
            self.late = self._hear_all(exchange, exchange.waiting)
            exchange.waiting = []

    # -- messages ----------------------------------------------------------------------
    def on_message(self, ctx: MessageContext) -> bool:
        """Follows ``ctx``; true when the rules have nothing to judge now (``now`` is
        ``None``: their ``on_message`` returns at once, so the engine skips it)."""
        self._answered = None
        self.now = None
        exchange = self.exchanges.get(ctx.entry.ch)
        if exchange is None:
            return True
        if ctx.entry.dir == "c2s" and exchange.resp_seq is None:
            # Judged when the response head arrives (what most rules check is in it):
            # only what the rules will read of it (a 16 MB request's bytes and params
            # would stay in memory while a 16 MB answer is read).
            exchange.waiting.append(keep(ctx))
            return True
        self.passed = self.note(ctx, exchange)
        self.now = exchange
        return False

    def note(self, ctx: MessageContext, exchange: Exchange) -> bool:
        """What a message of ``exchange`` shows (once its head is known, or known never
        to come); whether the traffic still is Streamable HTTP after it."""
        era_of = (ctx.conversation.key, ctx.era)
        if era_of != self._era_of:  # (else refresh() finds it the newest entry: a no-op)
            refresh(self.eras, *era_of)
            self._era_of = era_of
        if ctx.entry.dir == "c2s":
            exchange.conversation = ctx.conversation.key
            exchange.era = ctx.era
            if ctx.kind == "request":
                exchange.has_request = True
                if exchange.status == 202 and exchange.s2c == 0:
                    self.old_sse = True  # the answer will come on another stream
            path = exchange.path
            if exchange.method == "POST" and path is not None and path != self._endpoint:
                refresh(self.endpoints, path, None)  # the MCP endpoint
                self._endpoint = path
        return not self.old_sse

    def _hear_all(self, exchange: Exchange, waiting: list[MessageContext]) -> list[Heard]:
        if len(waiting) == 1:  # (most often: one request; no comprehension's call)
            ctx = waiting[0]
            return [(ctx, self.note(ctx, exchange))]
        return [(ctx, self.note(ctx, exchange)) for ctx in waiting]

    # -- exchanges that end without a head ---------------------------------------------
    def answered(self, x: str) -> tuple[Exchange | None, list[Heard]]:
        """mcpeek answered exchange ``x`` itself: it is closed, its messages heard."""
        if self._answered is not None and self._answered[0] == x:
            return self._answered[1:]
        closed = self.exchanges.pop(x, None)
        late = self._hear_all(closed, closed.waiting) if closed and closed.waiting else []
        if closed is not None:
            closed.waiting = []
        self._answered = (x, closed, late)
        return closed, late

    def ending(self, conversation: Conversation) -> list[tuple[Exchange, list[Heard]]]:
        """The capture ended: the messages of ``conversation`` still waiting, heard."""
        if conversation is self._ended:
            return self._ended_late
        self._answered = None
        late: list[tuple[Exchange, list[Heard]]] = []
        for exchange in self.exchanges.values():
            if any(ctx.conversation is conversation for ctx in exchange.waiting):
                now = [c for c in exchange.waiting if c.conversation is conversation]
                exchange.waiting = [
                    c for c in exchange.waiting if c.conversation is not conversation
                ]
                late.append((exchange, self._hear_all(exchange, now)))
        self._ended, self._ended_late = conversation, late
        return late

    def era_of(self, exchange: Exchange) -> str | None:
        """The era last seen in the exchange's conversation (for judgments on records)."""
        if exchange.era is not None:
            return exchange.era
        key = exchange.session_key
        return self.eras.get(key) if key in self.eras else self.eras.get(ORIGIN)
