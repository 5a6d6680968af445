"""The Analyzer: the one sans-IO entry point from records to flows.

The proxy (live), ``show``/``lint`` (from a file), the TUI and tests all feed
it capture records with :meth:`Analyzer.feed`; it decodes each ``msg``,
routes it to its :class:`Conversation`, correlates it, and tells its
listeners. It does no I/O and never raises on what the records contain.

Listeners: :mod:`mcpeek.inspector.analysis.listener`.

Conversations: a stdio capture is one conversation. On HTTP, a legacy
session (``Mcp-Session-Id``) is one, and modern traffic without a session is
one per upstream origin. A client's message is in its conversation as soon as
it is recorded (a request naming its ``Mcp-Session-Id`` in that session's,
otherwise the origin's), so a call the server holds is in flight at once.
Only a message that may be an ``initialize`` without a session waits in its
exchange for the response headers, which may name its new session.

A streaming reader that shows no flow's messages (the live checks, ``lint``)
passes ``notification_window``: a flow then keeps its last notifications only
(and counts them all), so a request answered by a million progress
notifications costs no more memory than one answered by ten.
"""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from mcpeek.inspector.analysis.conversation import Conversation
from mcpeek.inspector.analysis.flow import Entry, Flow
from mcpeek.inspector.analysis.http_exchange import HttpExchange, may_initialize, session_of
from mcpeek.inspector.analysis.listener import AnalysisListener
from mcpeek.inspector.analysis.peek import UNSET, PeekEnvelope, Peeker
from mcpeek.inspector.jsonrpc import MessageDecoder, classify
from mcpeek.inspector.records import AnyRecord, Header, Http, Msg, Record, SeqRecord, wire_bytes

DEFAULT_TIMEOUT = 60.0
DROPPED = Msg(dir="c2s", ch="", raw="")  # stands in for the bytes of a forgotten message
EXPIRY_CHECK = 0.5  # seconds of capture time between looks for overdue requests
ORIGIN = "http:origin"


class Analyzer:
    def __init__(
        self,
        listeners: Iterable[AnalysisListener] = (),
        *,
        timeout: float = DEFAULT_TIMEOUT,
        keep_flows: bool = False,
        notification_window: int | None = None,
    ) -> None:
        self.listeners = list(listeners)
        self.timeout = timeout
        self.transport = "stdio"
        self.header: Header | None = None
        self.conversations: dict[str, Conversation] = {}
        self.flows: list[Flow] | None = [] if keep_flows else None
        self._decoder = MessageDecoder()
        self._peeker = Peeker()
        self._exchanges: dict[str, HttpExchange] = {}
        # Exchanges mcpeek answered itself: their response and end judge no server.
        self._proxy_answered: set[str] = set()
        self._flow_count = 0
        self._window = notification_window  # a flow keeps its last N notifications
        self._forget: list[Flow] = []
        self._ending: list[Flow] = []  # flows ended by the message being correlated
        self._inside = False  # correlating a message: flows that end wait in _ending
        self._decode_envelope = msgspec.json.Decoder(PeekEnvelope).decode
        self._now = 0.0
        self._stdio: Conversation | None = None

    # -- input ------------------------------------------------------------------
    def feed(self, record: Record) -> None:
        if isinstance(record, SeqRecord) and record.t - self._now >= EXPIRY_CHECK:
            # Time passes before the record is correlated: an answer that comes after
            # the timeout finds its request already declared unanswered (then late).
            self._advance(record.t)
        if type(record) is Msg:  # the hot path first
            conversation = (
                self._stdio or self._conversation("stdio")
                if record.ch == "stdio"
                else self._http_conversation(record)
            )
            if conversation is not None:  # else its session is not known yet
                for listener in self.listeners:
                    listener.on_record(record, conversation)
                if not _priming(record):
                    self._message(record, conversation)
        elif isinstance(record, Header):
            self.header = record
            self.transport = record.transport
            return
        elif isinstance(record, SeqRecord):
            by_proxy = self._answered_by_proxy(record)
            for listener in self.listeners:
                if not by_proxy or listener.sees_proxy_answers:
                    listener.on_record(record, None)
            if isinstance(record, Http):
                self._http(record)
                if record.by_proxy:
                    for listener in self.listeners:
                        if not listener.sees_proxy_answers:
                            listener.on_proxy_answered(record.x)

    def _answered_by_proxy(self, record: SeqRecord) -> bool:
        """Whether ``record`` is the response (or the end) of an exchange mcpeek
        answered itself, which the rules must not see as the server's answer."""
        if type(record) is not Http:
            return False
        if record.by_proxy:
            self._proxy_answered.add(record.x)
            return True
        if record.phase == "end" and record.x in self._proxy_answered:
            self._proxy_answered.discard(record.x)
            return True
        return False

    def _http_conversation(self, record: Msg) -> Conversation | None:
        """The conversation of a message off stdio; ``None`` when it waits (in its
        exchange) for the response headers that say which session it is in."""
        exchange = self._exchanges.get(record.ch)
        if exchange is not None and exchange.conversation is None and record.dir == "c2s":
            if exchange.pending or (exchange.session is None and may_initialize(record)):
                exchange.pending.append(record)
                return None
            # Only an initialize can be answered with a new session: any other message
            # is in its conversation now, so that a call the server holds is in flight.
            exchange.conversation = self._conversation(exchange.session or ORIGIN)
        if self.transport != "http":
            return self._stdio or self._conversation("stdio")
        if exchange is not None and exchange.conversation is not None:
            return exchange.conversation
        return self._conversation(ORIGIN)

    def feed_all(self, records: Iterable[Record]) -> None:
        for record in records:
            self.feed(record)

    def tick(self, now: float) -> None:
        """Let time pass without traffic (follow mode): overdue requests end."""
        self._advance(now)

    def finish(self) -> None:
        """The capture ended: close every conversation (in-flight → unanswered)."""
        for exchange in self._exchanges.values():
            self._release(exchange, self._conversation(exchange.session or ORIGIN))
        self.close_all()

    def close_all(self) -> None:
        for conversation in self.conversations.values():
            if not conversation.closed:
                conversation.close()
                for listener in self.listeners:
                    listener.on_conversation_end(conversation)

    # -- messages -----------------------------------------------------------------
    def _message(self, record: Msg, conversation: Conversation) -> None:
        data = record.raw if record.raw is not None else wire_bytes(record)
        try:  # the common case: one decode, nothing built twice
            envelope = self._decode_envelope(data)
        # a batch, bad or too deep JSON, text holding a lone surrogate (a record built in
        # a test; a capture's reader never makes one), …
        except (msgspec.MsgspecError, RecursionError, UnicodeError):
            message = self._decoder.decode(data)
            for m in message.items if message.kind == "batch" else (message,):
                parts = self._peeker.parts(m.params, m.result, m.error)
                seq, t, sender, ch = record.seq, record.t, record.dir, record.ch
                entry = Entry(seq, t, sender, ch, m.kind, m.id, m.method, record)
                self._correlate(entry, parts, conversation)
            return
        method = envelope.method
        no_result = envelope.result is UNSET
        no_error = envelope.error is UNSET
        if type(method) is str and no_result and no_error:  # classify()'s answers, quickly
            kind = "notification" if envelope.id is UNSET else "request"
        elif method is UNSET and no_result is not no_error:
            kind = "error" if no_result else "result"
            method = None
        else:
            kind, _ = classify(envelope)
            if not isinstance(method, str):
                method = None
        msg_id = envelope.id
        entry = Entry(record.seq, record.t, record.dir, record.ch, kind, msg_id, method, record)
        self._correlate(entry, envelope, conversation)

    def _correlate(self, entry: Entry, parts: PeekEnvelope, conversation: Conversation) -> None:
        # Listeners hear of the message first, then of the flows it ended.
        self._inside = True
        flow = conversation.handle(entry, parts)
        self._inside = False
        for listener in self.listeners:
            listener.on_message(entry, flow, conversation)
        if self._ending:
            ended, self._ending = self._ending, []
            for done in ended:
                self._flow_ended(done)
        if self._forget:
            self._forget_bytes()

    def _new_flow(self, conversation: str, sender: str, method: str | None) -> Flow:
        self._flow_count += 1
        flow = Flow(self._flow_count, conversation, sender, method)
        flow.window = self._window
        if self.flows is not None:
            self.flows.append(flow)
        return flow

    def _flow_ended(self, flow: Flow) -> None:
        if self._inside:  # inside a message: after its on_message
            self._ending.append(flow)
            return
        conversation = self.conversations[flow.conversation]
        for listener in self.listeners:
            listener.on_flow_end(flow, conversation)
        if self.flows is None:
            self._forget.append(flow)

    def _forget_bytes(self) -> None:
        """Streaming: once every listener has seen an ended flow (its last message
        included), the bounded window of recent flows keeps their ids for late
        answers, not their bytes."""
        for flow in self._forget:  # every entry of the flow (Flow.entries, unsorted)
            for attempt in flow.attempts:
                attempt.request.record = DROPPED
                if attempt.response is not None:
                    attempt.response.record = DROPPED
                for entry in attempt.duplicates:
                    entry.record = DROPPED
            for entry in flow.notifications:
                entry.record = DROPPED
            if flow.cancel is not None:
                flow.cancel.record = DROPPED
            if flow.orphan is not None:
                flow.orphan.record = DROPPED
        self._forget.clear()

    def _advance(self, t: float) -> None:
        self._now = max(self._now, t)
        for conversation in self.conversations.values():
            if not conversation.closed:
                conversation.expire(self._now, self.timeout)

    # -- conversations ------------------------------------------------------------
    def _conversation(self, key: str) -> Conversation:
        conversation = self.conversations.get(key)
        if conversation is None:
            conversation = Conversation(key, self.transport, self._new_flow, self._flow_ended)
            self.conversations[key] = conversation
            if key == "stdio":
                self._stdio = conversation
        return conversation

    def _http(self, record: Http) -> None:
        if record.phase == "request":
            self._exchanges[record.x] = HttpExchange(session_of(record.headers))
            return
        exchange = self._exchanges.get(record.x)
        if exchange is None:
            return
        if record.phase == "response":
            session = exchange.session or session_of(record.headers)
            self._release(exchange, self._conversation(session or ORIGIN))
            if record.by_proxy and exchange.conversation is not None:
                exchange.conversation.end_unjudged(record.x, "by-proxy")
        elif record.phase == "end":
            conversation = exchange.conversation or self._conversation(exchange.session or ORIGIN)
            self._release(exchange, conversation)
            if record.undecoded:
                conversation.end_unjudged(record.x, "undecoded")
            conversation.end_channel(record.x, client_closed=record.reason == "client-closed")
            del self._exchanges[record.x]

    def _release(self, exchange: HttpExchange, conversation: Conversation) -> None:
        if exchange.conversation is not None:
            return
        exchange.conversation = conversation
        pending, exchange.pending = exchange.pending, []
        for record in pending:
            for listener in self.listeners:
                listener.on_record(record, conversation)
            self._message(record, conversation)


def _priming(record: Msg) -> bool:
    """An SSE event with an empty ``data`` (a server primes a stream with one, so that
    the client holds an event id to resume from): a transport event, no message."""
    return record.raw == "" and record.dir == "s2c" and record.ch != "stdio"


def analyze(
    records: Iterable[AnyRecord], *listeners: AnalysisListener, timeout: float = DEFAULT_TIMEOUT
) -> Analyzer:
    """Run a whole record stream through a new Analyzer that keeps its flows."""
    analyzer = Analyzer(listeners, timeout=timeout, keep_flows=True)
    analyzer.feed_all(records)
    analyzer.finish()
    return analyzer
