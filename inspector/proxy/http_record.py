"""Recording the bodies the HTTP relay forwarded: JSON-RPC messages, SSE events, other bodies.

Both recorders read a copy of what was already forwarded, chunk by chunk.
A compressed body (``Content-Encoding``) is decoded for the record only, as
it goes (:mod:`mcpeek.inspector.proxy.decoding`); one that does not decode is noted
and stored as it crossed the wire, truncated like any non-JSON-RPC body.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from mcpeek.inspector.proxy.decoding import BodyDecoder, DecodeError, body_decoder
from mcpeek.inspector.proxy.sse import SseParser
from mcpeek.inspector.records import Direction, Event, Http, Msg, SeqRecord, text_fields

Emit = Callable[[Sequence[SeqRecord]], None]

BODY_LIMIT = 64 * 1024  # non-JSON-RPC bodies are stored truncated to this


def is_json(content_type: str) -> bool:
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/json" or media.endswith("+json")


class _Body:
    """One side's body: decoded (when it has a content coding) and kept for the record.

    ``keep_all`` keeps every byte (a JSON-RPC message is recorded whole);
    otherwise only the first :data:`BODY_LIMIT` bytes are kept, and ``size``
    counts them all. After a decoding failure the wire bytes are kept instead.
    The bytes kept are appended to one ``bytearray`` (:attr:`kept`), not listed
    chunk by chunk: a big body then grows in a mapping of its own, given back
    to the system once recorded, where its chunks stayed in the heap (and were
    joined into one more copy to be decoded).
    """

    def __init__(self, emit: Emit, x: str, content_encoding: str | None) -> None:
        self.emit = emit
        self.x = x
        self.decoder: BodyDecoder | None = body_decoder(content_encoding)
        self.failed = False
        self.wire: list[bytes] = []  # the first BODY_LIMIT wire bytes, for a failed decode
        self.wire_size = 0

    def decode(self, chunk: bytes) -> bytes | None:
        """The decoded bytes of ``chunk``, or ``None`` once the body failed to decode."""
        if self.wire_size < BODY_LIMIT:
            self.wire.append(chunk)
        self.wire_size += len(chunk)
        if self.failed:
            return None
        if self.decoder is None:
            return chunk
        try:
            return self.decoder.feed(chunk)
        except DecodeError as exc:
            self._fail(exc)
            return None

    def decode_end(self) -> bytes | None:
        if self.failed:
            return None
        if self.decoder is None:
            return b""
        try:
            return self.decoder.finish()
        except DecodeError as exc:
            self._fail(exc)
            return None

    def _fail(self, exc: DecodeError) -> None:
        self.failed = True
        self._note(Event(event="note", message=f"{self.x}: {exc}; recorded as sent"))

    def _note(self, event: Event) -> None:
        self.emit([event])

    def store_wire(self, record: Http) -> None:
        store_body(record, b"".join(self.wire), total=self.wire_size)
        record.undecoded = True  # what it said is unknown: no rule may guess


class ResponseRecorder(_Body):
    """Records a response body as it is relayed: SSE events, a JSON message, or a body."""

    def __init__(
        self,
        emit: Emit,
        x: str,
        is_sse: bool,
        is_json: bool,
        content_encoding: str | None,
        held: list[SeqRecord] | None = None,
    ) -> None:
        super().__init__(emit, x, content_encoding)
        # The records not emitted yet, in order: the response's record, when its
        # body was all in before its head was forwarded, and those of the body's
        # last chunk (see feed); they go out in one batch with the next ones (one
        # write to the capture for several).
        self.held = held or []
        self.sse = SseParser() if is_sse else None
        self.keep_all = is_json
        self.kept = bytearray()  # the body's bytes kept for the record (see _Body)
        self.size = 0

    def feed(self, chunk: bytes, *, last: bool = False) -> None:
        """Record ``chunk``; ``last``: the body ended with it and :meth:`finish` follows
        at once, whose batch its records then join."""
        data = self.decode(chunk)
        if data:
            self._take(data)
        if self.held and not last:
            records, self.held = self.held, []
            self.emit(records)

    def _note(self, event: Event) -> None:
        self.held.append(event)  # in its place among the body's records

    def _take(self, data: bytes) -> None:
        if self.sse is not None:
            events = self.sse.feed(data)
            if events:
                self.held.extend([_msg("s2c", self.x, e.data) for e in events])
                del events  # a big event's bytes go before it is redacted and encoded
            return
        if self.keep_all or self.size < BODY_LIMIT:
            self.kept += data
        self.size += len(data)

    def finish(self, reason: str) -> None:
        end = Http(x=self.x, phase="end", reason=reason)
        tail = self.decode_end() if reason == "complete" else b""
        if tail:
            self._take(tail)
        records, self.held = self.held, []
        if self.failed:
            self.store_wire(end)
        elif self.sse is not None:
            events, leftover = self.sse.finish()
            records.extend(_msg("s2c", self.x, e.data) for e in events)
            if leftover.strip():
                end.body, end.body_b64 = text_fields(leftover[:BODY_LIMIT])
                end.truncated = True  # a half-written event, dropped by SSE clients
        elif self.keep_all and self.size:
            body, self.kept = self.kept, bytearray()
            records.append(_msg("s2c", self.x, body))
            del body  # one copy of a big body at a time: its bytes go before it is encoded
        elif self.size:
            store_body(end, self.kept, total=self.size)
        records.append(end)
        self.emit(records)


class RequestRecorder(_Body):
    """Records a request as its body is streamed upstream.

    The ``request`` record goes out with the body's end (so that a body that
    is not JSON-RPC can be stored on it), or earlier through :meth:`head` when
    the exchange moves on first (the upstream answered, or failed). A body
    that looks like JSON-RPC becomes one ``c2s`` message; one cut short is
    recorded with ``partial`` set.
    """

    def __init__(
        self, emit: Emit, record: Http, content_type: str, content_encoding: str | None
    ) -> None:
        super().__init__(emit, record.x, content_encoding)
        record.encoding = self.decoder.encoding if self.decoder is not None else None
        self.record = record
        self.json = is_json(content_type)
        self.kept = bytearray()  # the body's bytes kept for the record (see _Body)
        self.first = b""  # the body's first byte that is not white space
        self.size = 0
        self.head_sent = False
        self.done = False
        self.client_failed = False  # reading the client's body failed

    def feed(self, chunk: bytes) -> None:
        data = self.decode(chunk)
        if data:
            self._take(data)

    def _take(self, data: bytes) -> None:
        if not self.first:
            self.first = data.lstrip()[:1]
        if self._is_message() or self.size < BODY_LIMIT:
            self.kept += data
        self.size += len(data)

    def _is_message(self) -> bool:
        return self.json or self.first in (b"{", b"[")

    def head(self) -> None:
        """The ``request`` record, now, if it has not gone out yet."""
        if not self.head_sent:
            self.head_sent = True
            self.emit([self.record])

    def finish(self, *, complete: bool = True) -> None:
        """The body ended (``complete``) or was cut short: record it, once."""
        if self.done:
            return
        self.done = True
        tail = self.decode_end() if complete else b""
        if tail:
            self._take(tail)
        records: list[SeqRecord] = []
        body, self.kept = self.kept, bytearray()
        message = self.size > 0 and not self.failed and self._is_message()
        if not self.head_sent:
            self.head_sent = True
            if self.failed:
                self.store_wire(self.record)
            elif self.size and not message:
                store_body(self.record, body, total=self.size)
            records.append(self.record)
        if message:
            records.append(_msg("c2s", self.x, body, partial=not complete))
        del body  # recorded as text now: the bytes go before the writer's copies
        if records:
            self.emit(records)


def _msg(direction: Direction, x: str, data: bytes | bytearray, *, partial: bool = False) -> Msg:
    raw, raw_b64 = text_fields(data)
    return Msg(dir=direction, ch=x, raw=raw, raw_b64=raw_b64, partial=partial)


def store_body(record: Http, body: bytes | bytearray, *, total: int | None = None) -> None:
    record.body, record.body_b64 = text_fields(body[:BODY_LIMIT])
    if (total if total is not None else len(body)) > BODY_LIMIT:
        record.truncated = True


def marking(emit: Emit, before: list[SeqRecord], made: str | None) -> Emit:
    """``emit`` for a request recorder whose message mcpeek acted on: the ``act``
    records go just before the message, which is marked ``made`` when it is mcpeek's."""

    def marked(records: Sequence[SeqRecord]) -> None:
        out: list[SeqRecord] = []
        for record in records:
            if type(record) is Msg:
                out.extend(before)
                record.made = made
            out.append(record)
        emit(out)

    return marked
