"""One exchange of the fast lane (:mod:`~mcpeek.inspector.proxy.fast_lane`), served
by the plain relay without aiohttp's server.

The same exchange as :meth:`HttpRelay.handle <mcpeek.inspector.proxy.http.HttpRelay.handle>`
and :func:`~mcpeek.inspector.proxy.http_response.relay_response` make through
aiohttp, for the requests the lane takes (:func:`qualifies`): forwarded
first, recorded after, the same records in the same order; the response's
head is the one aiohttp would write (the same headers added, serialized by
:func:`~mcpeek.inspector.proxy.http_wire.serialize_headers`), its body the
upstream's bytes, with its ``Content-Length`` or chunked, an SSE stream
chunk by chunk as it comes.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from aiohttp.helpers import EMPTY_BODY_STATUS_CODES, rfc822_formatted_time
from aiohttp.http import SERVER_SOFTWARE
from aiohttp.http_parser import SINGLETON_HEADERS
from multidict import CIMultiDict

from mcpeek.inspector.proxy.fast_lane import FastLane, Head
from mcpeek.inspector.proxy.http_body import ForwardedBody
from mcpeek.inspector.proxy.http_own import answer_records
from mcpeek.inspector.proxy.http_record import RequestRecorder, ResponseRecorder, is_json
from mcpeek.inspector.proxy.http_response import start_response
from mcpeek.inspector.proxy.http_wire import serialize_headers
from mcpeek.inspector.proxy.upstream import (
    LAST_CHUNK,
    UpstreamClosed,
    UpstreamResponse,
    chunk_frame,
)
from mcpeek.inspector.records import Http, SeqRecord

if TYPE_CHECKING:
    from mcpeek.inspector.proxy.http import HttpRelay

# aiohttp's limit on a request line and on a header field: longer ones get its 400.
_FIELD_LIMIT = 8190
# aiohttp's limit on a head's fields, and the ones it allows once: it answers 400 past them.
_MAX_HEADERS = 128


def qualifies(relay: HttpRelay, head: Head, small_body: int) -> bool:
    """Whether the lane may serve ``head``: an HTTP/1.1 request with an origin-form
    target the guard lets pass, and no body or a small one of announced length.
    What it leaves (refusals, big or chunked bodies, ``Expect``, ``Upgrade``, the
    OAuth metadata whose body the relay rewrites) aiohttp's server answers."""
    target = head.target
    if head.version != "1.1" or not target.startswith("/"):
        return False
    # request.path decodes escapes: a target that might name the protected-resource
    # metadata (whose body is rewritten) goes the slow way.
    if "%" in target or "well-known" in target:
        return False
    fields = head.fields
    # Requests the lane leaves to aiohttp whatever else they say (spelled out: this
    # runs for every request).
    if "Expect" in fields or "Upgrade" in fields or "Transfer-Encoding" in fields:
        return False
    if len(fields) > _MAX_HEADERS or any(
        len(fields.getall(name, ())) > 1 for name in SINGLETON_HEADERS
    ):
        return False
    if head.size > _FIELD_LIMIT and (  # else no line of the head can be over the limit
        len(target) > _FIELD_LIMIT or any(len(k) + len(v) > _FIELD_LIMIT for k, v in head.headers)
    ):
        return False
    lengths = fields.getall("Content-Length", ())
    if lengths:
        if len(lengths) > 1 or not lengths[0].isdigit() or int(lengths[0]) > small_body:
            return False
        head.content_length = int(lengths[0])
    return relay.guard.refusal(fields.get("Host"), fields.get("Origin")) is None


def _recorder(relay: HttpRelay, head: Head, headers: CIMultiDict[str]) -> RequestRecorder:
    x = f"x{relay.next_id()}"
    record = Http(x=x, phase="request", method=head.method, path=head.target, headers=head.headers)
    return RequestRecorder(
        relay.emit, record, headers.get("Content-Type", ""), headers.get("Content-Encoding")
    )


def cut_short(relay: HttpRelay, head: Head) -> None:
    """The client left while sending ``head``'s body (``head.body``: what came of it),
    recorded as aiohttp's server records it (``client_gone``)."""
    recorder = _recorder(relay, head, head.fields)
    if head.body:
        recorder.feed(head.body)
    recorder.finish(complete=False)
    recorder.head()
    relay.emit([Http(x=recorder.x, phase="end", reason="client-closed")])


async def serve(relay: HttpRelay, lane: FastLane, head: Head) -> None:
    """Relay one request the lane took, and record it (see the module's doc)."""
    # One coroutine, not one per step: each suspension resumes every coroutine
    # awaiting down to it, and an ``async with`` awaits twice more.
    rec = _recorder(relay, head, head.fields)
    try:
        with relay.active(lane.exchange):
            small = ForwardedBody(head.body, rec) if head.content_length is not None else None
            try:
                upstream = await relay.upstream_client.request(
                    head.method,
                    head.target,
                    relay.upstream_headers(head.fields),
                    head.body if small is not None else None,
                    sent=small.record if small is not None else None,
                )
            except OSError as exc:  # UpstreamError: no answer
                _bad_gateway(relay, lane, head, rec.x, relay.unreachable(exc, small, rec))
                return
            if small is not None:
                small.record()
            try:
                rec.head()
                await _relay_response(relay, lane, head, rec.x, upstream)
            finally:
                upstream.release()
    except asyncio.CancelledError:
        rec.finish(complete=False)
        relay.emit([Http(x=rec.x, phase="end", reason="client-closed")])
        raise


def _bad_gateway(relay: HttpRelay, lane: FastLane, head: Head, x: str, text: str) -> None:
    """The 502 aiohttp would send for ``answer_itself``, and its records."""
    body = f"mcpeek: {text}\n"
    data = body.encode()
    own = CIMultiDict(
        [("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", str(len(data)))]
    )
    _finish_head(own, head.keep_alive)
    lane.write(serialize_headers("HTTP/1.1 502 Bad Gateway", own) + data)
    headers = [(k.lower(), v) for k, v in own.items()]
    relay.emit(answer_records(x, 502, headers, text, "upstream-error"))


def _finish_head(headers: CIMultiDict[str], keep_alive: bool) -> None:
    """The headers aiohttp adds to every response it sends."""
    if "Date" not in headers:
        headers["Date"] = rfc822_formatted_time()
    headers.setdefault("Server", SERVER_SOFTWARE)
    if not keep_alive:
        headers["Connection"] = "close"


async def _relay_response(
    relay: HttpRelay, lane: FastLane, head: Head, x: str, upstream: UpstreamResponse
) -> None:
    """Forward ``upstream`` to the client chunk by chunk, recording each chunk after
    it was written (as :func:`~mcpeek.inspector.proxy.http_response.relay_response`)."""
    path = head.target.partition("?")[0]  # no escapes in a fast-lane target: request.path
    _, headers, content_type, is_sse, encoding, sse_rewrite, record = start_response(
        relay, head.method, path, x, upstream
    )
    # A body all in already is forwarded and recorded with nothing awaited in
    # between (nothing can cancel the exchange there): the response's record then
    # goes out with the body's, in one write to the capture instead of two.
    held: list[SeqRecord] = [record] if upstream.whole() else []
    if not held:
        relay.emit([record])
    # What aiohttp's StreamResponse.prepare makes of these headers.
    status = upstream.status
    empty = status in EMPTY_BODY_STATUS_CODES or head.method == "HEAD"
    length_text = headers.get("Content-Length")
    length = int(length_text) if length_text is not None else None
    chunked = length is None and not empty
    if chunked:
        headers["Transfer-Encoding"] = "chunked"
    if empty:
        if length_text is not None and status in EMPTY_BODY_STATUS_CODES:
            del headers["Content-Length"]
        headers.popall("Transfer-Encoding", None)
    elif length != 0:
        headers.setdefault("Content-Type", "application/octet-stream")
    _finish_head(headers, head.keep_alive)
    # The head goes with the body's first bytes when they are in already (one write,
    # one segment), else now, alone: an SSE client sees the head before any event.
    pending = serialize_headers(f"HTTP/1.1 {status} {upstream.reason}", headers)
    if not upstream.buffered():
        lane.write(pending)
        pending = b""
    recorder = ResponseRecorder(relay.emit, x, is_sse, is_json(content_type), encoding, held)
    left = length if length is not None else 0
    reason = "complete"
    ended = False  # the last chunk went to the client before the body was recorded
    try:
        while chunk := await upstream.next_chunk():
            out = sse_rewrite(chunk) if sse_rewrite else chunk
            ended = upstream.at_eof()
            if chunked:
                out = chunk_frame(out) + LAST_CHUNK if ended else chunk_frame(out)
            elif empty or not left:
                out = b""
            elif len(out) > left:  # as aiohttp's writer: never past the length
                out = out[:left]
            left -= len(out)
            lane.write(pending + out if pending else out)
            pending = b""
            if not ended:
                await lane.drain()
            recorder.feed(chunk, last=ended)  # then nothing awaited before finish
    except UpstreamClosed:
        reason = "client-closed" if lane.is_closing() else "upstream-closed"
    except ConnectionResetError:
        reason = "client-closed"
    if reason == "complete" and not ended and chunked:
        pending += LAST_CHUNK
    if pending:
        lane.write(pending)
    if reason == "upstream-closed":
        lane.close()  # the client's stream ends the same way: no clean end of body
    recorder.finish(reason)
