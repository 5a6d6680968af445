"""The HTTP relay when the user asked it to act on traffic (faults, scripts).

:class:`ActingHttpRelay` changes two steps of the plain
:class:`~mcpeek.inspector.proxy.http.HttpRelay`, which runs alone (its fast
path untouched) when no action is configured: a JSON-RPC POST body is read
whole and decided on before it goes upstream, and a JSON or SSE response is
decided on message by message (event by event) before it reaches the
client. Each exchange is acted on by itself. Bodies the actor cannot judge
(compressed, not JSON, the OAuth metadata the relay rewrites) take the plain
path.

Records: what each peer received is in ``msg`` records (``made`` marks
mcpeek's bytes), preceded by an ``act`` record holding the original; an
answer given in place is an exchange whose response is ``by_proxy``.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from aiohttp import web

from mcpeek.inspector.jsonrpc import MessageDecoder
from mcpeek.inspector.proxy.http import HttpRelay
from mcpeek.inspector.proxy.http_body import ForwardedBody
from mcpeek.inspector.proxy.http_headers import end_to_end
from mcpeek.inspector.proxy.http_inject import LISTEN, HttpInjector
from mcpeek.inspector.proxy.http_own import RECORDED, answer_itself, client_gone, own_headers
from mcpeek.inspector.proxy.http_record import RequestRecorder, is_json, marking
from mcpeek.inspector.proxy.http_response import upstream_broke_off
from mcpeek.inspector.proxy.sse import SseBlocks, message_event
from mcpeek.inspector.proxy.upstream import UpstreamClosed, UpstreamError, UpstreamResponse
from mcpeek.inspector.records import Direction, Event, Http, Msg, SeqRecord, text_fields

if TYPE_CHECKING:
    from mcpeek.inspector.act.verdicts import Outcome

Decide = Callable[[Direction, str, bytes], Awaitable["Outcome"]]
DISCONNECTED = "disconnected"  # the end reason of an exchange a disconnect fault cut
SENT, DROPPED, CUT = "sent", "dropped", "cut"  # what became of one message of a response
STREAM_KIND = "mcpeek.stream-kind"  # request key: which kind of stream its response is


class ActingHttpRelay(HttpRelay):
    """The HTTP relay with ``decide`` between receiving a message and forwarding it."""

    fast_lane = False  # every exchange is one to act on: aiohttp's server serves them all

    def __init__(self, *args: Any, decide: Decide, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.decide = decide
        self._decoder = MessageDecoder()
        self.injector = HttpInjector(
            self.emit, decide, lambda: f"x{next(self._ids)}", self.upstream_client, self.origin
        )

    async def close_exchanges(self) -> None:
        await self.injector.close()
        await super().close_exchanges()

    # -- the client's POST -------------------------------------------------------------
    async def _forward(
        self, request: web.BaseRequest, recorder: RequestRecorder
    ) -> web.StreamResponse:
        if not _judged_request(request):
            return await super()._forward(request, recorder)
        pieces: list[bytes] = []
        size = 0
        try:  # whole, to be judged; never more than the limit in memory
            while (chunk := await request.content.readany()) and size <= self.max_request_body:
                pieces.append(chunk)
                size += len(chunk)
        except Exception:
            return client_gone(self.emit, request, recorder)
        body = b"".join(pieces)
        if size > self.max_request_body:
            recorder.head()
            text = f"request body over the limit of {self.max_request_body} bytes"
            return await answer_itself(self.emit, request, recorder.x, 413, text, "refused")
        self.injector.client_posted(request.raw_path, self.upstream_headers(request.headers), body)
        request[STREAM_KIND] = "listen" if self._decoder.decode(body).method == LISTEN else "post"
        outcome = await self.decide("c2s", recorder.x, body)
        if outcome.delay:
            await asyncio.sleep(outcome.delay)
        before: list[SeqRecord] = [outcome.act] if outcome.act is not None else []
        if outcome.disconnect:
            recorder.head()
            return self._cut(request, recorder.x, before)
        if outcome.answer is not None:
            recorder.emit = marking(recorder.emit, before, None)
            recorder.feed(body)
            recorder.finish()
            return await self._answer(request, recorder.x, outcome.answer)
        if outcome.forward is None:  # dropped: the server never hears of it
            recorder.head()
            self.emit(before)
            return await self._swallow(request, recorder.x, body)
        recorder.emit = marking(recorder.emit, before, outcome.made)
        return await self._send_upstream(request, recorder, outcome.forward)

    async def _send_upstream(
        self, request: web.BaseRequest, recorder: RequestRecorder, body: bytes
    ) -> web.StreamResponse:
        headers = self.upstream_headers(request.headers)
        headers.popall("Content-Length", None)  # an edited body has its own length
        forwarded = ForwardedBody(body, recorder)  # recorded once written, as the relay's
        try:
            upstream = await self.upstream_client.request(
                request.method, request.raw_path, headers, body, sent=forwarded.record
            )
        except UpstreamError as exc:
            forwarded.record()
            reason = f"upstream {self.origin} unreachable: {exc or type(exc).__name__}"
            self.emit([Event(event="upstream-error", message=reason)])
            return await answer_itself(
                self.emit, request, recorder.x, 502, reason, "upstream-error"
            )
        forwarded.record()
        async with upstream:
            return await self._relay_response(request, recorder.x, upstream)

    async def _answer(self, request: web.BaseRequest, x: str, answer: bytes) -> web.Response:
        """An answer in place of the server's: a JSON response mcpeek sends itself."""
        response = web.Response(status=200, body=answer, content_type="application/json")
        with contextlib.suppress(ConnectionResetError):
            await response.prepare(request)
            await response.write_eof()
        request[RECORDED] = True
        raw, raw_b64 = text_fields(answer)
        self.emit(
            [
                Http(
                    x=x, phase="response", status=200, headers=own_headers(response), by_proxy=True
                ),
                Msg(dir="s2c", ch=x, raw=raw, raw_b64=raw_b64, made="reply"),
                Http(x=x, phase="end", reason="complete"),
            ]
        )
        return response

    async def _swallow(self, request: web.BaseRequest, x: str, body: bytes) -> web.StreamResponse:
        """A dropped message: a notification or response is accepted (202) as a server
        would; a request is never answered (the client's timeout is the point)."""
        if self._decoder.decode(body).kind == "request":
            request[RECORDED] = True
            await self._hold()
        response = web.Response(status=202)
        with contextlib.suppress(ConnectionResetError):
            await response.prepare(request)
            await response.write_eof()
        request[RECORDED] = True
        self.emit(
            [
                Http(
                    x=x, phase="response", status=202, headers=own_headers(response), by_proxy=True
                ),
                Http(x=x, phase="end", reason="complete"),
            ]
        )
        return response

    def _cut(self, request: web.BaseRequest, x: str, before: list[SeqRecord]) -> web.Response:
        note = Event(event="note", message=f"{x}: mcpeek aborted the exchange (a disconnect fault)")
        self.emit([*before, note, Http(x=x, phase="end", reason=DISCONNECTED)])
        request[RECORDED] = True
        if request.transport is not None:
            request.transport.abort()
        return web.Response(status=500)  # nobody is left to read it

    # -- the server's answer --------------------------------------------------------------
    async def _relay_response(
        self, request: web.BaseRequest, x: str, upstream: UpstreamResponse
    ) -> web.StreamResponse:
        content_type = upstream.headers.get("Content-Type", "")
        media = content_type.split(";", 1)[0].strip().lower()
        is_sse = media == "text/event-stream"
        # The legacy standalone GET stream too: mcpeek may splice its own events in.
        stream = request.method == "POST" or _standalone_stream(request)
        judged = (is_sse and stream) or is_json(content_type)
        if not judged or upstream.headers.get("Content-Encoding") or upstream.status >= 300:
            return await super()._relay_response(request, x, upstream)
        request[RECORDED] = True
        head = Http(
            x=x, phase="response", status=upstream.status, headers=list(upstream.headers.items())
        )
        self.emit([head])
        headers = end_to_end(upstream.headers)
        headers.popall("Content-Length", None)  # an edited body has its own length
        response = web.StreamResponse(
            status=upstream.status, reason=upstream.reason, headers=headers
        )
        events = SseBlocks() if is_sse else None
        dropped = False  # a message of this response went nowhere: the client must wait
        if is_sse:
            self.injector.stream_opened(x, request, response, request.get(STREAM_KIND, "get"))
        try:
            await response.prepare(request)  # (the client may be gone: see relay_response)
            if events is None:
                body = await upstream.read()
                if body.strip():
                    state = await self._one(request, response, x, body, None)
                    if state == CUT:
                        return response
                    dropped = state == DROPPED
            else:
                async for chunk in upstream.chunks():
                    for block, data in events.feed(chunk):
                        state = await self._one(request, response, x, data, block)
                        if state == CUT:
                            return response
                        dropped = dropped or state == DROPPED
        except UpstreamClosed:
            self.emit([Http(x=x, phase="end", reason=upstream_broke_off(request))])
            return response
        except ConnectionResetError:  # writing to the client
            self.emit([Http(x=x, phase="end", reason="client-closed")])
            return response
        finally:
            self.injector.stream_closed(x)
        if dropped:  # the end of the body would tell the client; it waits instead
            await self._hold()
        # The client's end first: a client that leaves while it drains is recorded
        # once, by handle, as client-closed, not also as complete.
        with contextlib.suppress(ConnectionResetError):
            await response.write_eof()
        self.emit([Http(x=x, phase="end", reason="complete")])
        return response

    @staticmethod
    async def _hold() -> None:
        """Keep the exchange open until the client gives up or mcpeek stops (then
        :meth:`HttpRelay.handle` records its end as ``client-closed``)."""
        await asyncio.Event().wait()

    async def _one(
        self,
        request: web.BaseRequest,
        response: web.StreamResponse,
        x: str,
        data: bytes,
        block: bytes | None,
    ) -> str:
        """Decide on one message of a response (a JSON body, or an SSE event's data; a
        block without data passes as it is) and write the outcome: SENT, DROPPED or CUT."""
        if block is not None and not data:
            await response.write(block)
            return SENT
        outcome = await self.decide("s2c", x, data)
        if outcome.delay:
            await asyncio.sleep(outcome.delay)
        before: list[SeqRecord] = [outcome.act] if outcome.act is not None else []
        if outcome.disconnect:
            self._cut(request, x, before)
            return CUT
        sent = outcome.forward
        if outcome.answer is not None:  # a server's request, answered as the client would
            raw, raw_b64 = text_fields(data)
            asked = Msg(dir="s2c", ch=x, raw=raw, raw_b64=raw_b64)  # recorded, as on stdio
            if self.injector.answer_server(outcome.answer, [*before, asked]):
                return SENT
            before, sent = [], data  # nowhere known to POST it: the client answers
        if sent is None:
            self.emit(before)
            return DROPPED
        made = outcome.made
        if block is None:
            await response.write(sent)
        else:
            await response.write(block if sent == data else message_event(sent))
        raw, raw_b64 = text_fields(sent)
        self.emit([*before, Msg(dir="s2c", ch=x, raw=raw, raw_b64=raw_b64, made=made)])
        return SENT


def _standalone_stream(request: web.BaseRequest) -> bool:
    """The legacy era's GET stream of a session (not the deprecated HTTP+SSE
    transport's GET, whose ``endpoint`` event the plain relay rewrites)."""
    return request.method == "GET" and "Mcp-Session-Id" in request.headers


def _judged_request(request: web.BaseRequest) -> bool:
    """A POST whose body the actor can read as JSON-RPC (not compressed)."""
    return (
        request.method == "POST"
        and is_json(request.headers.get("Content-Type", ""))
        and not request.headers.get("Content-Encoding")
    )
