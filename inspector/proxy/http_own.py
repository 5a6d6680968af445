"""The responses mcpeek sends itself, as capture records.

Besides what it relays, the proxy answers some requests on its own: 403 (the
guard), 413 (a body over the limit), 502 (no upstream), and the 400s and 500s
aiohttp writes by itself (a malformed request). Each is recorded as an
exchange of its own, so that the capture holds every response the client got.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence

from aiohttp import web

from mcpeek.inspector.proxy.http_record import RequestRecorder, store_body
from mcpeek.inspector.proxy.listener import UNPARSED
from mcpeek.inspector.records import Event, Http, SeqRecord

Emit = Callable[[Sequence[SeqRecord]], None]
#: The key set on a request whose response the relay recorded itself.
RECORDED = "mcpeek.recorded"


def own_headers(response: web.StreamResponse) -> list[tuple[str, str]]:
    """The headers of a response mcpeek made, as recorded."""
    return [(k.lower(), v) for k, v in response.headers.items()] or [
        ("content-type", response.content_type)
    ]


def aiohttp_answer_records(
    x: str, request: web.BaseRequest, response: web.StreamResponse
) -> list[SeqRecord]:
    """A response aiohttp sent without the relay (a malformed request's 400, a 500)."""
    body = response.body if isinstance(response, web.Response) else None
    text = bytes(body).decode("utf-8", "replace") if isinstance(body, (bytes, bytearray)) else ""
    unparsed = bool(request.get(UNPARSED))  # no method, path or headers to speak of
    end = Http(x=x, phase="end", reason="complete")
    if text:
        store_body(end, text.encode())
    what = "a malformed request" if unparsed else f"{request.method} {request.raw_path}"
    first_line = text.strip().splitlines()[0] if text.strip() else ""
    note = f"mcpeek answered {what} {response.status} itself" + (
        f": {first_line}" if first_line else ""
    )
    return [
        Http(
            x=x,
            phase="request",
            method=None if unparsed else request.method,
            path=None if unparsed else request.raw_path,
            headers=[] if unparsed else list(request.headers.items()),
        ),
        Http(
            x=x,
            phase="response",
            status=response.status,
            headers=own_headers(response),
            by_proxy=True,
        ),
        end,
        Event(event="note", message=note),
    ]


async def answer_itself(
    emit: Emit,
    request: web.BaseRequest,
    x: str,
    status: int,
    text: str,
    reason: str,
    *,
    head: Http | None = None,
) -> web.StreamResponse:
    """mcpeek's own answer, sent, then recorded (after ``head``, the request's
    record, when it is not out yet). A body the client is still sending is not
    read: the connection is closed after the answer instead."""
    body = f"mcpeek: {text}\n"
    response = web.Response(status=status, text=body)
    unread = request.body_exists and not request.content.is_eof()
    if unread:
        response.force_close()
    with contextlib.suppress(ConnectionResetError):
        await response.prepare(request)
        await response.write_eof()
    if unread:
        request.protocol.force_close()
    request[RECORDED] = True
    records: list[SeqRecord] = [] if head is None else [head]
    emit(records + answer_records(x, status, own_headers(response), text, reason))
    return response


def answer_records(
    x: str, status: int, headers: list[tuple[str, str]], text: str, reason: str
) -> list[SeqRecord]:
    """The records of mcpeek's own answer ``text`` (sent with ``headers``, as recorded)."""
    records: list[SeqRecord] = [
        Http(x=x, phase="response", status=status, headers=headers, by_proxy=True),
        Http(x=x, phase="end", reason=reason, body=f"mcpeek: {text}\n"),
    ]
    if reason == "refused":
        records.append(Event(event="note", message=f"refused {x}: {text}"))
    return records


def client_gone(emit: Emit, request: web.BaseRequest, recorder: RequestRecorder) -> web.Response:
    """The client's body broke off (it disconnected, or sent less than it said)."""
    recorder.finish(complete=False)
    recorder.head()
    emit([Http(x=recorder.x, phase="end", reason="client-closed")])
    request[RECORDED] = True
    return web.Response(status=400)  # nobody is left to read it
