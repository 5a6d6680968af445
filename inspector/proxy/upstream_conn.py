"""One HTTP/1.1 connection to the upstream: an asyncio ``Protocol`` whose
response side is parsed by llhttp (``httptools``).

The connection carries one exchange at a time (no pipelining). It hands the
response head over once complete, then the body as it arrives: each time the
relay asks, all that came since it last asked (at once, when something did),
de-chunked by llhttp when the response is chunked, raw otherwise, and never
decompressed. Header names and values are
decoded as UTF-8 with ``surrogateescape``, as aiohttp's parser does, so that a
byte that is not UTF-8 goes on to the client unchanged. Reading pauses while
the relay has more than :data:`HIGH_WATER` bytes of body still to forward.

A connection is fit for another exchange only when its response was complete
and read to its end, its request written whole, and neither side asked to close
(:meth:`UpstreamConnection.reusable`); anything else closes it.
"""

from __future__ import annotations

import asyncio
from collections import deque

import httptools

from mcpeek.inspector.proxy.write_pause import WritePause

#: Body bytes buffered, not yet taken by the relay, before reading pauses.
HIGH_WATER = 256 * 1024


class UpstreamError(OSError):
    """No answer from the upstream: not reachable, or it closed or broke the
    connection before its response head was complete."""


class UpstreamClosed(ConnectionError):
    """The upstream's response body broke off: the connection closed, or sent
    bytes that are not HTTP, before the body's end."""


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogateescape")


class UpstreamConnection(WritePause, asyncio.Protocol):
    """The protocol of one connection to the upstream (see the module's doc)."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self.transport: asyncio.Transport | None = None
        self._parser = httptools.HttpResponseParser(self)
        self.lost = False
        self._paused = False  # reading paused: the relay is behind
        self.writer: asyncio.Task[None] | None = None  # writes a streamed request body
        self.exchanges = 0  # how many exchanges began on this connection
        self.begin(head_only=False)
        self._in_exchange = False

    # -- the exchange's state ------------------------------------------------------------
    def begin(self, *, head_only: bool) -> None:
        """Start an exchange; ``head_only``: a HEAD request, whose response has no body."""
        self._in_exchange = True
        self.exchanges += 1
        self.answered = False  # a byte of the response came
        self.head: asyncio.Future[None] = self._loop.create_future()
        self.status = 0
        self.reason = ""
        self.headers: list[tuple[str, str]] = []
        self.keep_alive = False
        self.head_only = head_only
        self._informational = False  # a 1xx head, followed by the real one
        self.complete = False
        self.error: BaseException | None = None
        self._chunks: deque[bytes] = deque()
        self._pieces: list[bytes] = []
        self._buffered = 0
        self._waiter: asyncio.Future[None] | None = None

    def reusable(self) -> bool:
        """Whether another exchange may use this connection."""
        return (
            self.complete
            and self.keep_alive
            and not self._chunks
            and not self.head_only
            and not self.lost
            and self.error is None
            and (self.writer is None or (self.writer.done() and not self.writer.cancelled()))
            and self.transport is not None
            and not self.transport.is_closing()
        )

    def idle(self) -> None:
        """Back in the pool: any byte the upstream sends now closes the connection."""
        self._in_exchange = False
        self.writer = None

    def close(self) -> None:
        if self.writer is not None and not self.writer.done():
            self.writer.cancel()
        if self.transport is not None:
            self.transport.close()

    def fail(self, exc: BaseException) -> None:
        """The exchange failed (``exc`` goes to whoever waits on it) and the connection closes."""
        if not self.head.done():
            self.head.set_exception(exc)
        elif not self.complete and self.error is None:
            self.error = exc
        self._wake()
        if self.transport is not None:
            self.transport.abort()

    # -- the body, as the relay reads it ---------------------------------------------------
    async def next_chunk(self) -> bytes:
        """The body's next chunk (all that arrived since the last call), ``b""`` at its
        clean end; raises where it broke off."""
        while True:
            if self._chunks:  # all that came since the last call, in one piece (fewer writes)
                chunks = self._chunks
                chunk = chunks.popleft() if len(chunks) == 1 else b"".join(chunks)
                chunks.clear()
                self._buffered = 0
                if self._paused and self.transport:
                    self._paused = False
                    self.transport.resume_reading()
                return chunk
            if self.complete:
                return b""
            if self.error is not None:
                raise self.error
            self._waiter = self._loop.create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None

    def at_eof(self) -> bool:
        """Whether the body's clean end has come and every chunk was taken."""
        return self.complete and not self._chunks

    def buffered(self) -> bool:
        """Whether :meth:`next_chunk` would return at once."""
        return bool(self._chunks) or self.complete or self.error is not None

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    # -- writing the request ---------------------------------------------------------------
    async def drain(self) -> None:
        """Wait while the transport's write buffer is full."""
        if self.lost:
            raise UpstreamClosed("the upstream closed the connection")
        if self._drain is not None:
            await self._drain

    # -- asyncio.Protocol ------------------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        if not self._in_exchange:  # nothing was asked: not a connection to reuse
            self.lost = True
            self.close()
            return
        self.answered = True
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserUpgrade:  # 101: what follows is no longer HTTP
            self.complete, self.keep_alive = True, False
        except httptools.HttpParserError as exc:
            what = f"the upstream sent a malformed response: {exc}"
            self.fail(UpstreamError(what) if not self.head.done() else UpstreamClosed(what))
            return
        if self._pieces:
            chunk = self._pieces[0] if len(self._pieces) == 1 else b"".join(self._pieces)
            self._pieces.clear()
            self._chunks.append(chunk)
            self._buffered += len(chunk)
            if self._buffered > HIGH_WATER and not self._paused and self.transport:
                self._paused = True
                self.transport.pause_reading()
        self._wake()

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = True
        self._drain_failed(UpstreamClosed("the upstream closed the connection"))
        if not self._in_exchange or self.complete:
            return
        if self.head.done() and exc is None and self.error is None and self._until_close():
            self.complete = True  # a clean close is this body's end
            self._wake()
        elif not self.head.done():
            reason = f": {exc}" if exc else ""
            self.head.set_exception(UpstreamError(f"closed the connection unanswered{reason}"))
        elif self.error is None:
            self.error = UpstreamClosed("the upstream closed the connection mid-body")
            self._wake()

    def _until_close(self) -> bool:
        """Whether the response's body ends when the connection does (asked only when
        it closes: not worked out for every response)."""
        names = {name.lower() for name, _ in self.headers}
        return (
            "content-length" not in names
            and "transfer-encoding" not in names
            and self.status not in (204, 304)
        )

    # -- httptools callbacks -----------------------------------------------------------------
    def on_message_begin(self) -> None:
        if self.complete:  # a second response to one request
            self.keep_alive = False
        self.headers = []
        self.reason = ""

    def on_status(self, status: bytes) -> None:
        self.reason += _text(status)

    def on_header(self, name: bytes, value: bytes) -> None:
        # Decoded here, not by _text: called for every header of every response.
        self.headers.append(
            (name.decode("utf-8", "surrogateescape"), value.decode("utf-8", "surrogateescape"))
        )

    def on_headers_complete(self) -> None:
        status = self._parser.get_status_code()
        if 100 <= status < 200 and status != 101:  # 100 Continue and the like: not the answer
            self._informational = True
            return
        self.status = status
        self.keep_alive = self._parser.should_keep_alive()
        if not self.head.done():
            self.head.set_result(None)
        if self.head_only:  # no body follows, whatever the head announces
            self.complete = True

    def on_body(self, body: bytes) -> None:
        if not self.head_only:
            self._pieces.append(body)

    def on_message_complete(self) -> None:
        if self._informational:
            self._informational = False
            return
        self.complete = True
