"""The Streamable HTTP reverse proxy: ``mcpeek http --upstream URL``.

Every method and path is relayed to the upstream origin. Bodies pass through
unchanged and as they arrive: an SSE response is streamed chunk by chunk
(never buffered), compression is passed through untouched, and no read
timeout cuts a long ``subscriptions/listen`` stream. Each exchange (``x1``,
``x2``…) is recorded as ``http`` records (request, response, end) and one
``msg`` record per JSON-RPC message in the POST body, the JSON response or
an SSE event, after the bytes were forwarded.

Two deliberate rewrites, both for the proxy to be usable at all: ``Host``
names the upstream (unless ``preserve_host``), and, for OAuth-protected
upstreams (``rewrite_resource``), the protected-resource metadata's
``resource`` and the ``resource_metadata`` URL of a 401's
``WWW-Authenticate`` name the proxy instead of the upstream, so that clients
checking them against the URL they connected to still accept them. The
deprecated HTTP+SSE transport's ``endpoint`` event gets the same treatment.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import Callable, Sequence
from urllib.parse import urlsplit

import aiohttp
from aiohttp import web
from multidict import CIMultiDict

from mcpeek.inspector.proxy import http_wire
from mcpeek.inspector.proxy.guard import RequestGuard
from mcpeek.inspector.proxy.rewrite import Rewriter
from mcpeek.inspector.proxy.sse import SseParser
from mcpeek.inspector.records import Event, Http, Msg, SeqRecord, text_fields

Emit = Callable[[Sequence[SeqRecord]], None]

HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "proxy-connection",
    }
)
BODY_LIMIT = 64 * 1024  # non-JSON-RPC bodies are stored truncated to this
MAX_REQUEST_BODY = 256 * 1024 * 1024


def _end_to_end(headers: CIMultiDict[str] | aiohttp.typedefs.LooseHeaders) -> CIMultiDict[str]:
    source = CIMultiDict(headers)
    listed = {t.strip().lower() for v in source.getall("connection", []) for t in v.split(",")}
    return CIMultiDict(
        (k, v) for k, v in source.items() if k.lower() not in HOP_BY_HOP and k.lower() not in listed
    )


def _is_json(content_type: str) -> bool:
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/json" or media.endswith("+json")


class HttpRelay:
    def __init__(
        self,
        upstream: str,
        emit: Emit,
        guard: RequestGuard,
        *,
        preserve_host: bool = False,
        rewrite_resource: bool = True,
    ) -> None:
        parts = urlsplit(upstream)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"--upstream {upstream!r}: expected an http:// or https:// URL")
        self.upstream = upstream
        self.origin = f"{parts.scheme}://{parts.netloc}"
        self.upstream_host = parts.netloc
        self.emit = emit
        self.guard = guard
        self.preserve_host = preserve_host
        self.rewrite_resource = rewrite_resource
        self.public_origin = ""  # set once listening: http://127.0.0.1:PORT
        self._ids = itertools.count(1)
        self._session: aiohttp.ClientSession | None = None
        self._active: set[asyncio.Task[object]] = set()

    async def __aenter__(self) -> HttpRelay:
        http_wire.install()  # header bytes that are not UTF-8 go on unchanged
        self._session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=0, ttl_dns_cache=300),
            timeout=aiohttp.ClientTimeout(total=None, sock_connect=30, sock_read=None),
            auto_decompress=False,  # relay compressed bodies as they are
            cookie_jar=aiohttp.DummyCookieJar(),
        )
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._session is not None:
            await self._session.close()

    async def close_exchanges(self) -> None:
        """Shutting down: end every open exchange (recorded as ``client-closed``)."""
        tasks = list(self._active)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def app(self) -> web.Application:
        app = web.Application(client_max_size=MAX_REQUEST_BODY)
        app.router.add_route("*", "/{tail:.*}", self.handle)
        return app

    # -- one exchange -----------------------------------------------------------------
    async def handle(self, request: web.Request) -> web.StreamResponse:
        x = f"x{next(self._ids)}"
        body = await request.read()
        headers = list(request.headers.items())
        content_type = request.headers.get("Content-Type", "")
        record = Http(
            x=x, phase="request", method=request.method, path=request.path_qs, headers=headers
        )
        is_message = bool(body) and (_is_json(content_type) or body.lstrip()[:1] in (b"{", b"["))
        if body and not is_message:
            _store_body(record, body)
        records: list[SeqRecord] = [record]
        if is_message:
            raw, raw_b64 = text_fields(body)
            records.append(Msg(dir="c2s", ch=x, raw=raw, raw_b64=raw_b64))
        refusal = self.guard.refusal(request.headers.get("Host"), request.headers.get("Origin"))
        if refusal is not None:
            self.emit(records)
            return self._refuse(x, refusal)
        self.emit(records)
        task = asyncio.current_task()
        if task is not None:
            self._active.add(task)
        try:
            return await self._forward(request, x, body)
        except asyncio.CancelledError:
            self.emit([Http(x=x, phase="end", reason="client-closed")])
            raise
        finally:
            if task is not None:
                self._active.discard(task)

    def _refuse(self, x: str, reason: str) -> web.Response:
        text = f"mcpeek: forbidden: {reason}\n"
        self.emit(
            [
                Http(x=x, phase="response", status=403, headers=[("content-type", "text/plain")]),
                Http(x=x, phase="end", reason="complete", body=text),
                Event(event="note", message=f"refused {x}: {reason}"),
            ]
        )
        return web.Response(status=403, text=text)

    async def _forward(self, request: web.Request, x: str, body: bytes) -> web.StreamResponse:
        assert self._session is not None
        headers = _end_to_end(request.headers)
        if not self.preserve_host:
            headers["Host"] = self.upstream_host
        url = self.origin + request.path_qs
        try:
            upstream = await self._session.request(
                request.method,
                url,
                headers=headers,
                data=body or None,
                allow_redirects=False,
                skip_auto_headers=("Accept-Encoding", "User-Agent", "Accept", "Content-Type"),
            )
        except (TimeoutError, aiohttp.ClientError, OSError) as exc:
            reason = f"upstream {self.origin} unreachable: {exc or type(exc).__name__}"
            self.emit(
                [
                    Event(event="upstream-error", message=reason),
                    Http(
                        x=x, phase="response", status=502, headers=[("content-type", "text/plain")]
                    ),
                    Http(x=x, phase="end", reason="upstream-error"),
                ]
            )
            return web.Response(status=502, text=f"mcpeek: {reason}\n")
        async with upstream:
            return await self._relay_response(request, x, upstream)

    async def _relay_response(
        self, request: web.Request, x: str, upstream: aiohttp.ClientResponse
    ) -> web.StreamResponse:
        rewriter = Rewriter(self, request, upstream) if self.rewrite_resource else None
        headers = _end_to_end(upstream.headers)
        if rewriter is not None:
            rewriter.headers(headers)
        self.emit(
            [
                Http(
                    x=x,
                    phase="response",
                    status=upstream.status,
                    headers=list(upstream.headers.items()),
                )
            ]
        )
        content_type = upstream.headers.get("Content-Type", "")
        is_sse = content_type.split(";", 1)[0].strip().lower() == "text/event-stream"
        if rewriter is not None and rewriter.wants_body(content_type):
            return await rewriter.relay_metadata(x, headers)
        sse_rewrite = rewriter.sse if rewriter is not None and is_sse else None
        response = web.StreamResponse(
            status=upstream.status, reason=upstream.reason, headers=headers
        )
        length = upstream.headers.get("Content-Length")
        if length is not None and length.isdigit() and "Transfer-Encoding" not in upstream.headers:
            response.content_length = int(length)
        await response.prepare(request)
        recorder = _BodyRecorder(
            self.emit,
            x,
            is_sse,
            _is_json(content_type),
            bool(upstream.headers.get("Content-Encoding")),
        )
        reason = "complete"
        try:
            async for chunk in upstream.content.iter_any():
                await response.write(sse_rewrite(chunk) if sse_rewrite else chunk)  # forward ...
                recorder.feed(chunk)  # ... then observe what the upstream sent
        except (
            aiohttp.ClientPayloadError,
            aiohttp.ServerDisconnectedError,
            aiohttp.ClientConnectionError,
        ) as exc:
            if (
                isinstance(exc, aiohttp.ClientConnectionResetError)
                or request.transport is None
                or request.transport.is_closing()
            ):
                reason = "client-closed"
            else:
                reason = "upstream-closed"
                # Close the client's stream the same way: no clean end of body.
                request.transport.close()
        except ConnectionResetError:
            reason = "client-closed"
        recorder.finish(reason)
        if reason == "complete":
            with contextlib.suppress(ConnectionResetError):
                await response.write_eof()
        return response


class _BodyRecorder:
    """Records a response body as it is relayed: SSE events, a JSON message, or a body."""

    def __init__(self, emit: Emit, x: str, is_sse: bool, is_json: bool, encoded: bool) -> None:
        self.emit = emit
        self.x = x
        self.sse = SseParser() if is_sse and not encoded else None
        self.keep_all = is_json and not encoded
        self.chunks: list[bytes] = []
        self.size = 0

    def feed(self, chunk: bytes) -> None:
        if self.sse is not None:
            events = self.sse.feed(chunk)
            if events:
                self.emit([_event_msg(self.x, e.data) for e in events])
            return
        if self.keep_all or self.size < BODY_LIMIT:
            self.chunks.append(chunk)
        self.size += len(chunk)

    def finish(self, reason: str) -> None:
        end = Http(x=self.x, phase="end", reason=reason)
        records: list[SeqRecord] = []
        if self.sse is not None:
            events, leftover = self.sse.finish()
            records.extend(_event_msg(self.x, e.data) for e in events)
            if leftover.strip():
                end.body, end.body_b64 = text_fields(leftover[:BODY_LIMIT])
                end.truncated = True  # a half-written event, dropped by SSE clients
        elif self.keep_all and self.size:
            raw, raw_b64 = text_fields(b"".join(self.chunks))
            records.append(Msg(dir="s2c", ch=self.x, raw=raw, raw_b64=raw_b64))
        elif self.size:
            _store_body(end, b"".join(self.chunks), total=self.size)
        records.append(end)
        self.emit(records)


def _event_msg(x: str, data: bytes) -> Msg:
    raw, raw_b64 = text_fields(data)
    return Msg(dir="s2c", ch=x, raw=raw, raw_b64=raw_b64)


def _store_body(record: Http, body: bytes, *, total: int | None = None) -> None:
    record.body, record.body_b64 = text_fields(body[:BODY_LIMIT])
    if (total if total is not None else len(body)) > BODY_LIMIT:
        record.truncated = True
