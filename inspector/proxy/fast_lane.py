"""The HTTP relay's fast lane: the common MCP exchange served without aiohttp's server.

aiohttp's server costs the relay more CPU per request than anything else on
its path, for features the usual exchange does not need. A connection starts
in this lane, an ``asyncio.Protocol`` whose requests are parsed by llhttp
(``httptools``); each request the relay says it may serve (:class:`Head`, and
the relay's ``qualifies``) is served by the relay's ``serve`` coroutine, which
writes the response to the lane's transport itself.

Anything else goes to aiohttp for the rest of the connection's life, exactly:
aiohttp's protocol takes over the transport and is fed every byte from the
start of the request that did not qualify. llhttp gives no offset of a
message's end, so the lane only serves a message when the bytes it holds are
that message and nothing more (one request begun, and it complete); bytes
that hold more (pipelined requests in one write), a malformed request, an
``Upgrade``, an ``Expect``, a body that is large or chunked, go to aiohttp
unread. Bytes that arrive while an exchange is served wait (reading paused
beyond :data:`PENDING_LIMIT`) and are taken as the start of the next request.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, Protocol

import httptools
from multidict import CIMultiDict

from mcpeek.inspector.proxy.write_pause import WritePause

#: A request head held longer than this, still incomplete, goes to aiohttp (its limits).
HEAD_LIMIT = 32 * 1024
#: Bytes held while an exchange is served before reading pauses.
PENDING_LIMIT = 256 * 1024
#: How long a kept-alive connection may idle, its next head incomplete (aiohttp's
#: default; the lane is given the listener's).
KEEPALIVE_TIMEOUT = 3630.0


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogateescape")  # as aiohttp's parser decodes a head


class Head:
    """One request, whole, as the lane parsed it."""

    __slots__ = (
        "body",
        "content_length",
        "fields",
        "headers",
        "keep_alive",
        "method",
        "size",
        "target",
        "version",
    )

    def __init__(self) -> None:
        self.method = ""
        self.target = ""
        self.version = ""
        self.headers: list[tuple[str, str]] = []  # in order, as recorded
        self.fields: CIMultiDict[str] = CIMultiDict()  # the same, to look up
        self.size = 0  # bytes held when the head was complete: a bound on any field's length
        self.keep_alive = True
        self.content_length: int | None = None
        self.body = b""


class LaneHost(Protocol):
    """What the lane asks of the listener it belongs to."""

    def serve(self, lane: FastLane, head: Head) -> Coroutine[Any, Any, None]: ...
    def qualifies(self, head: Head) -> bool: ...
    def cut(self, head: Head) -> None: ...
    def hand_over(self, lane: FastLane) -> asyncio.Protocol: ...
    def lane_opened(self, lane: FastLane, transport: asyncio.Transport) -> None: ...
    def head_done(self, lane: FastLane) -> None: ...
    def lane_closed(self, lane: FastLane) -> None: ...


class FastLane(WritePause, asyncio.Protocol):
    """One client connection while it stays in the fast lane (see the module's doc)."""

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        host: LaneHost,
        keepalive_timeout: float = KEEPALIVE_TIMEOUT,
    ) -> None:
        self._loop = loop
        self._host = host
        self._keepalive_timeout = keepalive_timeout
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self.exchange: asyncio.Task[None] | None = None
        self._held = bytearray()  # the bytes of the request not served yet
        self._paused = False
        self._idle: asyncio.TimerHandle | None = None
        self._idle_until: float | None = None  # when an idle connection closes (None: busy)
        self._last = False  # the server stops: no request after the one served
        self._new_message()

    def _new_message(self) -> None:
        self._parser = httptools.HttpRequestParser(self)
        self._head = Head()
        self._begun = 0
        self._complete = False
        self._head_complete = False
        self._fits = False
        self._body: list[bytes] = []

    # -- asyncio.Protocol ----------------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        self._host.lane_opened(self, transport)
        self._start_idle()  # as aiohttp's handler: one that never sends a whole head closes

    def data_received(self, data: bytes) -> None:
        if self.exchange is not None:  # the next request, early: taken once this one is done
            self._held += data
            if len(self._held) > PENDING_LIMIT and not self._paused:
                self._paused = True
                self.transport.pause_reading()  # type: ignore[union-attr]
            return
        self._take(data)

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self._host.lane_closed(self)
        self._stop_idle()
        self._drain_failed(ConnectionResetError("the client closed the connection"))
        if self.exchange is not None:
            self.exchange.cancel()  # recorded as client-closed, as aiohttp cancels its handler
        elif self._head_complete and self._fits and self._begun == 1:
            self._head.body = b"".join(self._body)
            self._host.cut(self._head)  # the client left mid-body

    # -- writing, for the exchange -------------------------------------------------------
    def write(self, data: bytes) -> None:
        if not self.closed and self.transport is not None:
            self.transport.write(data)

    async def drain(self) -> None:
        """Wait while the client reads slower than the upstream sends."""
        if self._drain is not None:
            await self._drain

    def is_closing(self) -> bool:
        return self.closed or self.transport is None or self.transport.is_closing()

    def close(self) -> None:
        self._stop_idle()
        if self.transport is not None:
            self.transport.close()

    def stop(self) -> None:
        """The server stops: closed now if idle, else once its exchange is served (as
        aiohttp's handler finishes its request, then closes)."""
        self._last = True
        if self.exchange is None:
            self.close()

    # -- reading requests ----------------------------------------------------------------
    def _take(self, data: bytes | bytearray) -> None:
        self._held += data
        try:
            self._parser.feed_data(data)
            malformed = False
        except (httptools.HttpParserError, httptools.HttpParserUpgrade):  # aiohttp's to answer
            malformed = True  # handed over out of this block: aiohttp's errors chain nothing
        if malformed or self._begun > 1 or (self._head_complete and not self._fits):
            self._give_up()  # pipelined, or not a request the lane serves
        elif self._complete:
            head = self._head
            head.body = b"".join(self._body)
            self._held.clear()
            self._new_message()
            self.exchange = self._loop.create_task(self._serve(head))
        elif not self._head_complete and len(self._held) > HEAD_LIMIT:
            self._give_up()

    async def _serve(self, head: Head) -> None:
        # Then the next request, in the same task step: a done callback would cost
        # the loop one more callback to schedule and run per exchange.
        try:
            await self._host.serve(self, head)
        finally:
            self._served(head)

    def _served(self, head: Head) -> None:
        self.exchange = None
        if self.closed or self.transport is None or self.transport.is_closing():
            return
        if not head.keep_alive or self._last:
            self.close()
            return
        held = bytes(self._held)
        self._held.clear()
        if self._paused:
            self._paused = False
            self.transport.resume_reading()
        self._start_idle()  # from now, a next head begun or not (a whole head stops it)
        if held:
            self._take(held)

    def _give_up(self) -> None:
        """aiohttp's server takes the connection over, from the held request's first byte."""
        transport = self.transport
        assert transport is not None
        held = bytes(self._held)
        self._held.clear()
        self._stop_idle()
        self._host.lane_closed(self)  # aiohttp's from now on
        protocol = self._host.hand_over(self)
        transport.set_protocol(protocol)
        protocol.connection_made(transport)
        if self._drain is not None:
            # The transport is paused and tells only the protocol it paused: aiohttp's
            # would write on unchecked, and fail on the resume_writing it gets instead.
            protocol.pause_writing()
        if self._paused:
            transport.resume_reading()
        if held:
            protocol.data_received(held)

    def _start_idle(self) -> None:
        """Close the connection if no whole head comes within the keep-alive timeout
        (as aiohttp's keep-alive timer: it spares a request whose head came whole).
        A whole head only clears :attr:`_idle_until`: the timer is left to run, and
        moved on when it fires (as aiohttp's is). A timer made and cancelled per
        request cost the loop a heap push and a pop, compared in Python."""
        self._idle_until = self._loop.time() + self._keepalive_timeout
        if self._idle is None:
            self._idle = self._loop.call_at(self._idle_until, self._idle_due)

    def _idle_due(self) -> None:
        self._idle = None
        until = self._idle_until
        if until is None:  # busy: the next idle spell sets a timer of its own
            return
        if self._loop.time() >= until:
            self.close()
        else:  # the connection served requests since the timer was set
            self._idle = self._loop.call_at(until, self._idle_due)

    def _stop_idle(self) -> None:
        self._idle_until = None
        if self._idle is not None:
            self._idle.cancel()
            self._idle = None

    # -- httptools callbacks -------------------------------------------------------------
    def on_message_begin(self) -> None:
        self._begun += 1

    def on_url(self, url: bytes) -> None:
        self._head.target += _text(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        # Decoded here, not by a helper: called for every header of every request.
        self._head.headers.append(
            (name.decode("utf-8", "surrogateescape"), value.decode("utf-8", "surrogateescape"))
        )

    def on_headers_complete(self) -> None:
        if self._begun > 1:
            return
        head = self._head
        parser = self._parser
        head.method = parser.get_method().decode("ascii", "replace")
        head.version = parser.get_http_version()
        head.keep_alive = parser.should_keep_alive()
        head.fields = CIMultiDict(head.headers)
        head.size = len(self._held)
        self._head_complete = True
        self._idle_until = None  # a request begun: aiohttp's keep-alive timer spares it too
        self._host.head_done(self)
        self._fits = self._host.qualifies(head)

    def on_body(self, body: bytes) -> None:
        self._body.append(body)

    def on_message_complete(self) -> None:
        if self._begun == 1:
            self._complete = True
