"""The HTTP proxy's listening side: aiohttp's low-level server, with two additions.

- A header-read timeout, like nginx's ``client_header_timeout``: a connection
  that has not finished sending its first request's headers within
  ``header_timeout`` seconds is closed (a slowloris client would otherwise
  hold it open for ever). Later requests on a kept-alive connection are
  bounded by aiohttp's keep-alive timeout, which also runs while a request
  head is incomplete.
- Every response is reported to ``on_response`` once sent, including the
  ones aiohttp writes by itself (a 400 for a malformed request, a 500), so
  that the relay can record every response mcpeek sends, not only relayed
  ones.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, NamedTuple

from aiohttp import web, web_protocol
from aiohttp.abc import AbstractAccessLogger
from aiohttp.http_parser import RawRequestMessage
from aiohttp.streams import StreamReader

from mcpeek.inspector.proxy.fast_lane import KEEPALIVE_TIMEOUT, FastLane, Head

DEFAULT_HEADER_TIMEOUT = 60.0
#: The key set on a request whose head aiohttp could not parse (it answers 400 itself).
UNPARSED = "mcpeek.unparsed"
# aiohttp hands the request factory this stand-in message for a request it could
# not parse; without it (another aiohttp) such a request is recorded as it is given.
_PARSE_ERROR = getattr(web_protocol, "ERROR", None)

Handler = Callable[[web.BaseRequest], Awaitable[web.StreamResponse]]
Timed = web.RequestHandler | FastLane  # a connection whose first request head is awaited
OnResponse = Callable[[web.BaseRequest, web.StreamResponse], None]
OnTimeout = Callable[[str], None]


def _response_log(on_response: OnResponse) -> type[AbstractAccessLogger]:
    class ResponseLog(AbstractAccessLogger):
        """aiohttp's access-log hook, called after every response was sent."""

        def log(self, request: web.BaseRequest, response: web.StreamResponse, time: float) -> None:
            on_response(request, response)

    return ResponseLog


class FastExchanges(NamedTuple):
    """The relay's side of the fast lane: serving a request, and which requests it serves."""

    serve: Callable[[FastLane, Head], Coroutine[Any, Any, None]]
    qualifies: Callable[[Head], bool]
    cut: Callable[[Head], None]


class RelayServer(web.Server):
    def __init__(
        self,
        handler: Handler,
        *,
        on_response: OnResponse,
        on_header_timeout: OnTimeout,
        header_timeout: float = DEFAULT_HEADER_TIMEOUT,
        fast: FastExchanges | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            handler,
            request_factory=self._request,
            handler_cancellation=True,
            access_log_class=_response_log(on_response),
            access_log=logging.getLogger("mcpeek.http.responses"),
            auto_decompress=False,  # a compressed request body is relayed as it came
            **kwargs,
        )
        self.header_timeout = header_timeout
        self._on_header_timeout = on_header_timeout
        self._header_timers: dict[Timed, asyncio.TimerHandle] = {}
        self._fast = fast
        # The lanes close an idle connection when aiohttp's handlers would.
        self._keepalive_timeout = float(kwargs.get("keepalive_timeout", KEEPALIVE_TIMEOUT))
        self._lanes: set[FastLane] = set()

    def __call__(self) -> web.RequestHandler:
        """A new connection's protocol: the fast lane's when there is one."""
        if self._fast is None:
            return super().__call__()
        lane = FastLane(asyncio.get_running_loop(), self, self._keepalive_timeout)
        return lane  # type: ignore[return-value]

    def connection_made(self, handler: web.RequestHandler, transport: asyncio.Transport) -> None:
        super().connection_made(handler, transport)
        self._start_header_timer(handler, transport)

    def _start_header_timer(self, conn: Timed, transport: asyncio.Transport) -> None:
        if conn in self._header_timers:
            return
        loop = asyncio.get_running_loop()
        self._header_timers[conn] = loop.call_later(
            self.header_timeout, self._headers_too_slow, conn, transport
        )

    # -- the fast lane's host (fast_lane.LaneHost) ----------------------------------------
    def serve(self, lane: FastLane, head: Head) -> Coroutine[Any, Any, None]:
        assert self._fast is not None
        return self._fast.serve(lane, head)

    def qualifies(self, head: Head) -> bool:
        assert self._fast is not None
        return self._fast.qualifies(head)

    def cut(self, head: Head) -> None:
        assert self._fast is not None
        self._fast.cut(head)

    def hand_over(self, lane: FastLane) -> asyncio.Protocol:
        return super().__call__()

    def lane_opened(self, lane: FastLane, transport: asyncio.Transport) -> None:
        self._lanes.add(lane)
        self._start_header_timer(lane, transport)

    def head_done(self, lane: FastLane) -> None:
        timer = self._header_timers.pop(lane, None)
        if timer is not None:
            timer.cancel()

    def lane_closed(self, lane: FastLane) -> None:
        self._lanes.discard(lane)
        self.head_done(lane)

    def pre_shutdown(self) -> None:
        super().pre_shutdown()
        for lane in list(self._lanes):
            lane.stop()

    async def shutdown(self, timeout: float | None = None) -> None:
        """As aiohttp's handlers: each exchange under way may finish within ``timeout``,
        then every connection closes (an exchange cut short: recorded client-closed)."""
        serving = [lane.exchange for lane in self._lanes if lane.exchange is not None]
        served = asyncio.wait(serving, timeout=timeout) if serving else asyncio.sleep(0)
        await asyncio.gather(super().shutdown(timeout), served)
        for lane in list(self._lanes):
            lane.close()
        self._lanes.clear()

    def connection_lost(
        self, handler: web.RequestHandler, exc: BaseException | None = None
    ) -> None:
        super().connection_lost(handler, exc)
        timer = self._header_timers.pop(handler, None)
        if timer is not None:
            timer.cancel()

    def _headers_too_slow(self, conn: Timed, transport: asyncio.Transport) -> None:
        self._header_timers.pop(conn, None)
        peer = transport.get_extra_info("peername")
        transport.close()
        where = f"{peer[0]}:{peer[1]}" if isinstance(peer, tuple) else "a client"
        self._on_header_timeout(where)

    def _request(
        self,
        message: RawRequestMessage,
        payload: StreamReader,
        protocol: web.RequestHandler,
        writer: Any,
        task: asyncio.Task[None],
    ) -> web.BaseRequest:
        timer = self._header_timers.pop(protocol, None)
        if timer is not None:  # the first request's head is complete
            timer.cancel()
        request = web.BaseRequest(
            message, payload, protocol, writer, task, asyncio.get_running_loop()
        )
        if _PARSE_ERROR is not None and message is _PARSE_ERROR:
            request[UNPARSED] = True
        return request
