"""The plain relay's second half: the upstream's response, forwarded to the client
as it arrives, then recorded (see :mod:`~mcpeek.inspector.proxy.http`)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

from aiohttp import web
from multidict import CIMultiDict

from mcpeek.inspector.proxy.http_body import BodyTooLarge
from mcpeek.inspector.proxy.http_headers import end_to_end
from mcpeek.inspector.proxy.http_own import RECORDED
from mcpeek.inspector.proxy.http_record import ResponseRecorder, is_json
from mcpeek.inspector.proxy.rewrite import Rewriter
from mcpeek.inspector.proxy.upstream import UpstreamClosed, UpstreamResponse
from mcpeek.inspector.records import Event, Http

if TYPE_CHECKING:
    from mcpeek.inspector.proxy.http import HttpRelay


class Started(NamedTuple):
    """A relayed response's start, the same however it is served."""

    rewriter: Rewriter | None
    headers: CIMultiDict[str]  # the client's: end to end, rewritten
    content_type: str
    is_sse: bool
    encoding: str | None
    sse_rewrite: Callable[[bytes], bytes] | None
    record: Http  # the response's record, for the caller to emit


def start_response(
    relay: HttpRelay, method: str, path: str, x: str, upstream: UpstreamResponse
) -> Started:
    """The client's response headers for ``upstream``'s, and the record of its head."""
    rewriter = Rewriter(relay, method, path, upstream) if relay.rewrite_resource else None
    headers = end_to_end(upstream.headers)
    if rewriter is not None:
        rewriter.headers(headers)
    encoding = upstream.headers.get("Content-Encoding")
    record = Http(
        x=x,
        phase="response",
        status=upstream.status,
        headers=list(upstream.headers.items()),
        encoding=encoding or None,
    )
    content_type = upstream.headers.get("Content-Type", "")
    is_sse = content_type.split(";", 1)[0].strip().lower() == "text/event-stream"
    # Never on compressed bytes: the endpoint URL is not there to find, only to break.
    sse_rewrite = rewriter.sse if rewriter is not None and is_sse and not encoding else None
    return Started(rewriter, headers, content_type, is_sse, encoding, sse_rewrite, record)


async def relay_response(
    relay: HttpRelay, request: web.BaseRequest, x: str, upstream: UpstreamResponse
) -> web.StreamResponse:
    """Forward ``upstream`` to the client chunk by chunk, recording each chunk after
    it was written (and the OAuth rewrites the relay makes on the way)."""
    rewriter, headers, content_type, is_sse, encoding, sse_rewrite, record = start_response(
        relay, request.method, request.path, x, upstream
    )
    relay.emit([record])
    request[RECORDED] = True
    if rewriter is not None and rewriter.wants_body(content_type):
        try:
            return await rewriter.relay_metadata(x, headers)
        except UpstreamClosed:  # the document broke off
            relay.emit([Http(x=x, phase="end", reason=upstream_broke_off(request))])
            return web.Response(status=502)  # nobody is left to read it
    response = web.StreamResponse(status=upstream.status, reason=upstream.reason, headers=headers)
    length = upstream.headers.get("Content-Length")
    if length is not None and length.isdigit() and "Transfer-Encoding" not in upstream.headers:
        response.content_length = int(length)
    recorder = ResponseRecorder(relay.emit, x, is_sse, is_json(content_type), encoding)
    reason = "complete"
    ended = False  # the client's response ended before its last chunk was recorded
    try:
        # Inside: the head is written at once, and the client may have gone while the
        # upstream answered (its connection closing, not yet lost): still an end.
        await response.prepare(request)
        async for chunk in upstream.chunks():
            await response.write(sse_rewrite(chunk) if sse_rewrite else chunk)  # forward ...
            if upstream.at_eof():  # the body's clean end came with this chunk
                ended = await end_response(response)  # the client's end goes before recording
            recorder.feed(chunk)  # ... then observe what the upstream sent
    except UpstreamClosed:
        reason = upstream_broke_off(request)
    except ConnectionResetError:  # writing to the client (aiohttp's ClientConnectionResetError)
        reason = "client-closed"
    except Exception as exc:
        # The client's body, still streaming upstream, failed (the upstream connection
        # was cut with it, and the failure comes out here): over the limit, or broken off.
        reason = "refused" if isinstance(exc, BodyTooLarge) else "client-closed"
        why = (
            f"over the limit of {relay.max_request_body} bytes"
            if reason == "refused"
            else str(exc) or type(exc).__name__
        )
        text = f"{x}: the request body failed as the answer came ({why}): exchange cut"
        recorder.held.append(Event(event="note", message=text))
        if request.transport is not None:
            request.transport.close()
    if reason == "complete" and not ended:
        await end_response(response)
    # Recorded after the client has it all: a 16 MB body or event is redacted and
    # written while the client reads, not before it sees the end.
    recorder.finish(reason)
    return response


def upstream_broke_off(request: web.BaseRequest) -> str:
    """The end reason of an exchange whose upstream body broke off: ``client-closed``
    when the client had gone already, else ``upstream-closed``, and the client's
    connection is closed the same way (no clean end of body)."""
    transport = request.transport
    if transport is None or transport.is_closing():
        return "client-closed"
    transport.close()
    return "upstream-closed"


async def end_response(response: web.StreamResponse) -> bool:
    """End the client's response (its last chunk, for a chunked one)."""
    with contextlib.suppress(ConnectionResetError):
        await response.write_eof()
    return True
