"""The responses mcpeek sends itself, as capture records.

Besides what it relays, the proxy answers some requests on its own: 403 (the
guard), 413 (a body over the limit), 502 (no upstream), and the 400s and 500s
aiohttp writes by itself (a malformed request). Each is recorded as an
exchange of its own, so that the capture holds every response the client got.
"""

from __future__ import annotations

from aiohttp import web

from mcpeek.inspector.proxy.http_record import store_body
from mcpeek.inspector.proxy.listener import UNPARSED
from mcpeek.inspector.records import Event, Http, SeqRecord


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
        Http(x=x, phase="response", status=response.status, headers=own_headers(response)),
        end,
        Event(event="note", message=note),
    ]
