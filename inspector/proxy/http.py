"""The Streamable HTTP reverse proxy: ``mcpeek http --upstream URL``.

Every method and request target is relayed to the upstream origin byte for
byte (no dot segment resolved, no escape touched). Bodies pass through
unchanged and as they arrive, both ways: a request body is streamed to the
upstream (never buffered whole), an SSE response chunk by chunk, compressed
bodies as they are, and no read timeout cuts a long ``subscriptions/listen``
stream. Each exchange (``x1``, ``x2``…) is recorded as ``http`` records
(request, response, end) and one ``msg`` record per JSON-RPC message in the
POST body, the JSON response or an SSE event, decoded if compressed, after
the bytes were forwarded.

Whether a request may pass (the guard, the body size limit) is decided on its
head: a refused body is neither read nor recorded. Every answer mcpeek gives
itself (403, 413, 502, aiohttp's own 400) is recorded too.

Deliberate rewrites, all for the proxy to be usable at all: ``Host`` names
the upstream (unless ``preserve_host``); the upstream URL's ``user:password@``
becomes Basic credentials when the client sent no ``Authorization``; and, for
OAuth-protected upstreams (``rewrite_resource``), the protected-resource
metadata's ``resource`` and the ``resource_metadata`` URL of a 401's
``WWW-Authenticate`` name the proxy instead of the upstream, so that clients
checking them against the URL they connected to still accept them. The
deprecated HTTP+SSE transport's ``endpoint`` event gets the same treatment.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any
from urllib.parse import urlsplit

from aiohttp import web
from multidict import CIMultiDict, CIMultiDictProxy

from mcpeek.inspector.proxy import http_fast, http_wire
from mcpeek.inspector.proxy.guard import RequestGuard
from mcpeek.inspector.proxy.http_body import BodyTooLarge, ForwardedBody
from mcpeek.inspector.proxy.http_headers import basic_credentials, end_to_end
from mcpeek.inspector.proxy.http_own import (
    RECORDED,
    aiohttp_answer_records,
    answer_itself,
    client_gone,
)
from mcpeek.inspector.proxy.http_record import RequestRecorder
from mcpeek.inspector.proxy.http_response import relay_response
from mcpeek.inspector.proxy.listener import DEFAULT_HEADER_TIMEOUT, FastExchanges, RelayServer
from mcpeek.inspector.proxy.open_exchanges import OpenExchange, OpenExchanges
from mcpeek.inspector.proxy.upstream import UpstreamClient, UpstreamResponse
from mcpeek.inspector.records import Event, Http, SeqRecord

Emit = Callable[[Sequence[SeqRecord]], None]

MAX_REQUEST_BODY = 256 * 1024 * 1024
# A body announced this small is read whole, then sent in one piece: cheaper than a
# stream for the usual JSON-RPC POST, and its memory is bounded all the same.
SMALL_BODY = 64 * 1024


class HttpRelay:
    def __init__(
        self,
        upstream: str,
        emit: Emit,
        guard: RequestGuard,
        *,
        preserve_host: bool = False,
        rewrite_resource: bool = True,
        max_request_body: int = MAX_REQUEST_BODY,
        header_timeout: float = DEFAULT_HEADER_TIMEOUT,
    ) -> None:
        parts = urlsplit(upstream)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"--upstream {upstream!r}: expected an http:// or https:// URL")
        host = parts.netloc.rpartition("@")[2]  # user:password@ names no host
        self.origin = f"{parts.scheme}://{host}"
        self.upstream_host = host
        self.credentials = basic_credentials(parts.username, parts.password)
        self.emit = emit
        self.guard = guard
        self.preserve_host = preserve_host
        self.rewrite_resource = rewrite_resource
        self.max_request_body = max_request_body
        self.header_timeout = header_timeout
        self.public_origin = ""  # set once listening: http://127.0.0.1:PORT
        self._ids = itertools.count(1)
        self.upstream_client = UpstreamClient(self.origin)
        self._open = OpenExchanges()

    #: Whether requests may take the fast lane (:mod:`~mcpeek.inspector.proxy.fast_lane`):
    #: not for a relay that acts on messages, which aiohttp's server serves whole.
    fast_lane = True

    async def __aenter__(self) -> HttpRelay:
        http_wire.install()  # header bytes that are not UTF-8 go on unchanged to the client
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.upstream_client.close()

    async def close_exchanges(self) -> None:
        """Shutting down: end every open exchange (recorded as ``client-closed``)."""
        await self._open.close()

    def server(self, **options: float) -> RelayServer:
        """The listener to run (``web.ServerRunner(relay.server())``); aiohttp's timeouts."""
        small = min(SMALL_BODY, self.max_request_body)
        fast = FastExchanges(
            lambda lane, head: http_fast.serve(self, lane, head),
            lambda head: http_fast.qualifies(self, head, small),
            lambda head: http_fast.cut_short(self, head),
        )
        return RelayServer(
            self.handle,
            on_response=self._sent,
            on_header_timeout=self._header_timeout,
            header_timeout=self.header_timeout,
            fast=fast if self.fast_lane else None,
            **options,
        )

    def next_id(self) -> int:
        """The next exchange's number (``x1``, ``x2``...)."""
        return next(self._ids)

    def active(self, task: asyncio.Task[Any] | None) -> OpenExchange:
        """``with``: ``task`` is an open exchange; :meth:`close_exchanges` ends it."""
        return self._open.of(task)

    # -- one exchange -----------------------------------------------------------------
    async def handle(self, request: web.BaseRequest) -> web.StreamResponse:
        x = f"x{self.next_id()}"
        record = Http(
            x=x,
            phase="request",
            method=request.method,
            path=request.raw_path,  # the target exactly as the client sent it
            headers=list(request.headers.items()),
        )
        # Only an origin-form target ("/path?query") is appended to the upstream's
        # origin: an authority-form (CONNECT host:port), absolute-form or "*" target
        # would name another host, and the upstream's credentials would go with it.
        if not request.raw_path.startswith("/"):
            text = f"only origin-form request targets are relayed, not {request.raw_path!r}"
            return await answer_itself(self.emit, request, x, 400, text, "refused", head=record)
        # Decided on the head alone: a refused body is never read, recorded or forwarded.
        refusal = self.guard.refusal(request.headers.get("Host"), request.headers.get("Origin"))
        if refusal is not None:
            text = f"forbidden: {refusal}"
            return await answer_itself(self.emit, request, x, 403, text, "refused", head=record)
        length = request.content_length
        if length is not None and length > self.max_request_body:
            text = f"request body of {length} bytes is over the limit of {self.max_request_body}"
            return await answer_itself(self.emit, request, x, 413, text, "refused", head=record)
        if (
            request.version >= (1, 1)
            and request.headers.get("Expect", "").lower() == "100-continue"
        ):
            # The client waits for this before it sends the body (curl, a second), and
            # aiohttp's low-level server never sends it. Only now: a refused body is not asked for.
            await request.writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
            request.writer.output_size = 0  # (aiohttp's own expect handler does the same)
        headers = request.headers
        recorder = RequestRecorder(
            self.emit, record, headers.get("Content-Type", ""), headers.get("Content-Encoding")
        )
        try:
            with self.active(request.task):
                return await self._forward(request, recorder)
        except asyncio.CancelledError:
            recorder.finish(complete=False)
            self.emit([Http(x=x, phase="end", reason="client-closed")])
            raise

    def upstream_headers(
        self, client: CIMultiDictProxy[str] | CIMultiDict[str]
    ) -> CIMultiDict[str]:
        """The headers sent upstream for the client's ``client``."""
        headers = end_to_end(client)
        if not self.preserve_host:
            headers["Host"] = self.upstream_host
        if self.credentials is not None and "Authorization" not in headers:
            headers["Authorization"] = self.credentials  # the client's own take precedence
        return headers

    async def _forward(
        self, request: web.BaseRequest, recorder: RequestRecorder
    ) -> web.StreamResponse:
        x = recorder.x
        small: ForwardedBody | None = None  # a body small enough to send in one piece
        body: bytes | AsyncIterator[bytes] | None = None
        length = request.content_length
        if length is not None and length <= SMALL_BODY:
            try:
                read = await request.content.readexactly(length) if length else b""
                small = ForwardedBody(read, recorder)
                body = read
            except Exception as exc:  # cut short, or a payload aiohttp could not parse
                if isinstance(exc, asyncio.IncompleteReadError):
                    recorder.feed(exc.partial)
                return client_gone(self.emit, request, recorder)
        elif request.body_exists:
            body = self._stream_body(request, recorder)
        try:
            # The target byte for byte: no dot segments resolved, no escapes touched.
            upstream = await self.upstream_client.request(
                request.method,
                request.raw_path,
                self.upstream_headers(request.headers),
                body,
                sent=small.record if small is not None else None,
            )
        except Exception as exc:
            if recorder.client_failed:
                return client_gone(self.emit, request, recorder)
            if recorder.size > self.max_request_body:
                recorder.head()
                text = f"request body over the limit of {self.max_request_body} bytes"
                return await answer_itself(self.emit, request, x, 413, text, "refused")
            if not isinstance(exc, OSError):  # UpstreamError: no answer
                raise
            reason = self.unreachable(exc, small, recorder)
            return await answer_itself(self.emit, request, x, 502, reason, "upstream-error")
        if small is not None:  # recorded once written; else now, the upstream answered first
            small.record()
        async with upstream:
            recorder.head()
            return await self._relay_response(request, x, upstream)

    def unreachable(
        self, exc: OSError, small: ForwardedBody | None, recorder: RequestRecorder
    ) -> str:
        """No answer from the upstream: the request recorded, the event told; the reason
        to answer 502 with."""
        if small is not None:
            small.record()  # what the client sent (written or not before the failure)
        recorder.finish(complete=small is not None)
        recorder.head()
        reason = f"upstream {self.origin} unreachable: {exc or type(exc).__name__}"
        self.emit([Event(event="upstream-error", message=reason)])
        return reason

    async def _stream_body(
        self, request: web.BaseRequest, recorder: RequestRecorder
    ) -> AsyncIterator[bytes]:
        """The client's body, chunk by chunk as it arrives; each chunk is recorded
        once the upstream connection asked for the next one (it was written)."""
        while True:
            try:
                chunk = await request.content.readany()
            except Exception:
                recorder.client_failed = True  # not the upstream's doing
                recorder.finish(complete=False)  # what came of it (the answer may be under way)
                raise
            if not chunk:
                break
            if recorder.size + len(chunk) > self.max_request_body:
                recorder.size += len(chunk)
                raise BodyTooLarge
            yield chunk
            recorder.feed(chunk)
        recorder.finish()

    async def _relay_response(
        self, request: web.BaseRequest, x: str, upstream: UpstreamResponse
    ) -> web.StreamResponse:
        return await relay_response(self, request, x, upstream)

    # -- what the listener reports -----------------------------------------------------
    def _sent(self, request: web.BaseRequest, response: web.StreamResponse) -> None:
        """Every response sent; records those the relay did not (aiohttp's own)."""
        if not request.get(RECORDED):
            self.emit(aiohttp_answer_records(f"x{next(self._ids)}", request, response))

    def _header_timeout(self, peer: str) -> None:
        self.emit(
            [
                Event(
                    event="note",
                    message=f"closed the connection from {peer}: no complete request head "
                    f"within {self.header_timeout:g} s",
                )
            ]
        )
