"""An HTTP capture as a HAR 1.2 document, for browsers' developer tools and mitmproxy.

Each HTTP exchange of the capture is one HAR entry: the request and response
headers as the capture holds them (so redacted values stay redacted), the
bodies (a POST's JSON-RPC message, a JSON response, an SSE stream as its
text, any other body the capture kept), and the timings the capture saw
(``wait``: request to response headers; ``receive``: response headers to the
exchange's end). What HAR has no field for goes in ``_mcpeek`` custom fields
(HAR 1.2 allows fields that start with ``_``): the exchange's JSON-RPC
messages with their capture ``seq`` and time, how the exchange ended, and the
violations the rules find in its messages (recomputed, as ``lint`` does).

The capture keeps an SSE event's ``data`` only (not its ``id`` or ``event``
name), so an SSE body is rebuilt as ``data:`` lines, one event per message.
"""

from __future__ import annotations

import base64
import binascii
import http
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, quote, urlsplit

from mcpeek.inspector import __version__
from mcpeek.inspector.analysis import Analyzer
from mcpeek.inspector.analysis.analyzer import DEFAULT_TIMEOUT
from mcpeek.inspector.capture.reader import CaptureError, CaptureReader
from mcpeek.inspector.capture.run import run_capture
from mcpeek.inspector.records import AnyRecord, Header, Http, Msg, Record, header_bytes, wire_bytes
from mcpeek.rules.engine import Reported, RuleEngine

#: What a URL path and query keep as they are (reserved characters, and % for the
#: escapes already there); the rest (space, <, >, ...) is percent-encoded.
URL_SAFE = "/?#[]@!$&'()*+,;=:%~-._"


class NotHttpCapture(Exception):
    """HAR holds HTTP exchanges: a stdio capture has none."""


class _Exchange:
    __slots__ = ("end", "messages", "request", "response")

    def __init__(self, request: Http) -> None:
        self.request = request
        self.response: Http | None = None
        self.end: Http | None = None
        self.messages: list[Msg] = []


class _HttpOnly:
    """The analysis, refusing a capture whose header says it is not HTTP (at once,
    before its records are read)."""

    def __init__(self, analyzer: Analyzer) -> None:
        self._analyzer = analyzer

    def feed(self, record: Record) -> None:
        if isinstance(record, Header) and record.transport != "http":
            raise NotHttpCapture(
                f"a {record.transport} capture has no HTTP exchanges; HAR needs one "
                "recorded by mcpeek http"
            )
        self._analyzer.feed(record)

    def tick(self, now: float) -> None:
        self._analyzer.tick(now)

    def finish(self) -> None:
        self._analyzer.finish()


def capture_har(path: Path, timeout: float = DEFAULT_TIMEOUT) -> tuple[dict[str, Any], list[str]]:
    """The HAR document of the HTTP capture at ``path``, and the reader's problems.

    Raises :class:`NotHttpCapture`, or
    :class:`~mcpeek.inspector.capture.reader.CaptureError` for a file that is not
    a capture."""
    found: list[Reported] = []
    analyzer = Analyzer([RuleEngine(found.append)], timeout=timeout)
    exchanges: dict[str, _Exchange] = {}

    def collect(record: AnyRecord) -> None:
        if type(record) is Http:
            if record.phase == "request":
                exchanges[record.x] = _Exchange(record)
            elif (exchange := exchanges.get(record.x)) is not None:
                if record.phase == "response":
                    exchange.response = record
                else:
                    exchange.end = record
        elif type(record) is Msg and (exchange := exchanges.get(record.ch)) is not None:
            exchange.messages.append(record)

    reader = CaptureReader(path)
    run_capture(reader, _HttpOnly(analyzer), each=collect)
    header = analyzer.header
    upstream = header.target if header is not None and isinstance(header.target, str) else ""
    by_seq: dict[int, list[Reported]] = {}
    for reported in found:
        if reported.msgs:
            by_seq.setdefault(reported.msgs[-1], []).append(reported)
    for exchange in exchanges.values():
        _check_times(path, exchange)
    entries = [_entry(x, upstream, by_seq) for x in exchanges.values()]
    document = {
        "log": {
            "version": "1.2",
            "creator": {"name": "mcpeek", "version": __version__},
            "pages": [],
            "entries": entries,
            "comment": f"MCP traffic recorded by mcpeek http from {upstream}",
        }
    }
    return document, reader.problems


def _entry(exchange: _Exchange, upstream: str, by_seq: dict[int, list[Reported]]) -> dict[str, Any]:
    request, response, end = exchange.request, exchange.response, exchange.end
    sent = [m for m in exchange.messages if m.dir == "c2s"]
    answered = [m for m in exchange.messages if m.dir == "s2c"]
    wait = max(response.t - request.t, 0.0) if response is not None else 0.0
    finished = end.t if end is not None else (answered[-1].t if answered else request.t)
    receive = max(finished - (response.t if response is not None else request.t), 0.0)
    timings = {"send": 0.0, "wait": _ms(wait), "receive": _ms(receive)}
    url = _url(upstream, request.path or "/")
    request_body = "".join(_text(m) for m in sent) if sent else _stored_text(request)
    har_request: dict[str, Any] = {
        "method": request.method or "GET",
        "url": url,
        "httpVersion": "HTTP/1.1",
        "cookies": [],
        "headers": _headers(request),
        "queryString": [
            {"name": k, "value": v}
            for k, v in parse_qsl(urlsplit(url).query, keep_blank_values=True)
        ],
        "headersSize": -1,
        "bodySize": len(request_body.encode()) if request_body else 0,
    }
    if request_body:
        har_request["postData"] = {"mimeType": _mime(request), "text": request_body}
    violations = [
        {
            "rule": r.rule,
            "severity": r.severity,
            "message": r.message,
            "spec": r.spec,
            "msgs": r.msgs,
        }
        for m in exchange.messages
        for r in by_seq.get(m.seq, ())
    ]
    return {
        "startedDateTime": _iso(request.t),
        "time": round(sum(timings.values()), 3),
        "request": har_request,
        "response": _response(response, end, answered),
        "cache": {},
        "timings": timings,
        "_mcpeek": {
            "exchange": request.x,
            "end": end.reason if end is not None else None,
            "byProxy": bool(response is not None and response.by_proxy),
            "messages": [
                {"seq": m.seq, "t": m.t, "dir": m.dir, "text": _text(m)} for m in exchange.messages
            ],
            "violations": violations,
        },
    }


def _response(response: Http | None, end: Http | None, answered: list[Msg]) -> dict[str, Any]:
    if response is None:  # the upstream never answered (see _mcpeek.end)
        status, headers, mime = 0, [], ""
    else:
        status, headers, mime = response.status or 0, _headers(response), _mime(response)
    content: dict[str, Any] = {"size": 0, "mimeType": mime}
    if mime.startswith("text/event-stream"):
        text = "".join(_sse_event(_text(m)) for m in answered)
        content.update(size=len(text.encode()), text=text)
    elif answered:
        text = "".join(_text(m) for m in answered)
        content.update(size=len(text.encode()), text=text)
    elif end is not None and end.body_b64 is not None:
        content.update(size=len(_b64(end.body_b64)), text=end.body_b64)
        content["encoding"] = "base64"
    elif end is not None and end.body is not None:
        content.update(size=len(end.body.encode()), text=end.body)
    if end is not None and end.truncated:
        content["comment"] = "truncated by mcpeek's capture (64 KiB of a non-JSON-RPC body)"
    try:
        reason = http.HTTPStatus(status).phrase
    except ValueError:
        reason = ""
    return {
        "status": status,
        "statusText": reason,
        "httpVersion": "HTTP/1.1",
        "cookies": [],
        "headers": headers,
        "content": content,
        "redirectURL": next((h["value"] for h in headers if h["name"] == "location"), ""),
        "headersSize": -1,
        "bodySize": content["size"] if "text" in content else -1,
    }


def _headers(record: Http) -> list[dict[str, str]]:
    return [
        {"name": name, "value": value.decode("utf-8", "replace")}
        for name, value in header_bytes(record)
    ]


def _mime(record: Http) -> str:
    for name, value in record.headers or ():
        if name == "content-type":
            return value
    return ""


def _text(message: Msg) -> str:
    return (
        message.raw if message.raw is not None else wire_bytes(message).decode("utf-8", "replace")
    )


def _stored_text(record: Http) -> str:
    if record.body is not None:
        return record.body
    if record.body_b64 is not None:
        return _b64(record.body_b64).decode("utf-8", "replace")
    return ""


def _b64(text: str) -> bytes:
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):  # a capture is data: it may hold anything
        return b""


def _sse_event(data: str) -> str:
    return "".join(f"data: {line}\n" for line in data.split("\n")) + "\n"


def _url(upstream: str, path: str) -> str:
    """The request's URL; the redaction marker a secret query value became
    (``<redacted sha256:…>``) percent-encoded, so that the URL stays one (the
    ``queryString`` decodes it back)."""
    path = quote(path, safe=URL_SAFE)
    parts = urlsplit(upstream)
    if not parts.scheme or not parts.netloc:
        return f"http://mcpeek.invalid{path}"
    return f"{parts.scheme}://{parts.netloc}{path}"


def _check_times(path: Path, exchange: _Exchange) -> None:
    """A CaptureError (one line, as ``otlp`` says it) for a time no HAR date can hold:
    the document would get a made-up date or an ``Infinity``, which is no JSON."""
    records = [exchange.request, exchange.response, exchange.end, *exchange.messages]
    for record in records:
        if record is None:
            continue
        try:
            datetime.fromtimestamp(record.t, UTC)
        except (OverflowError, OSError, ValueError):
            raise CaptureError(
                f"{path}: record {record.seq} has the time t={record.t:g} s, "
                "which a HAR date cannot carry (years 1 to 9999)"
            ) from None


def _iso(t: float) -> str:
    try:
        return datetime.fromtimestamp(t, UTC).isoformat(timespec="microseconds")
    except (OverflowError, OSError, ValueError):
        return "1970-01-01T00:00:00.000000+00:00"


def _ms(seconds: float) -> float:
    return round(seconds * 1000.0, 3)
