"""The HTTP relay's client for its upstream: HTTP/1.1 on raw asyncio, responses
parsed by llhttp (``httptools``).

aiohttp's ``ClientSession`` did this job before and cost the relay more CPU per
request than anything else on its path; the relay needs little of it: one
origin, no redirects, cookies, decompression or read timeout. This client has
a pool of kept-alive connections to the origin (no limit), TLS for ``https://``
with the default verification (the system's CAs, ``SSL_CERT_FILE``), a 30 s
connect timeout and none on reads (a ``subscriptions/listen`` stream lives
for hours). A request goes out as given: its head in the order of its headers,
a body of bytes with its ``Content-Length``, a streamed one as it comes
(chunked unless the headers give its length). The response is the upstream's:
see :mod:`~mcpeek.inspector.proxy.upstream_conn`.
"""

from __future__ import annotations

import asyncio
import re
import ssl
from collections.abc import AsyncIterable, AsyncIterator, Callable, Coroutine
from typing import Any
from urllib.parse import urlsplit

from multidict import CIMultiDict

from mcpeek.inspector.proxy.http_wire import HEADER_CONTROL
from mcpeek.inspector.proxy.upstream_conn import UpstreamClosed, UpstreamConnection, UpstreamError

__all__ = ["UpstreamClient", "UpstreamClosed", "UpstreamError", "UpstreamResponse"]

CONNECT_TIMEOUT = 30.0
# HEADER_CONTROL without CR and LF (the head's own separators).
_CONTROL_BUT_CRLF = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
#: Methods a request may be sent again with (RFC 9110 §9.2.2).
IDEMPOTENT = frozenset({"GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE"})
Body = bytes | AsyncIterable[bytes] | None


def request_head(method: str, target: str, headers: CIMultiDict[str]) -> bytes:
    """The request line and headers as bytes (``surrogateescape`` strings give back
    the bytes they stand for); a control character in any of them is refused, as
    aiohttp refuses it, against header injection."""
    # Each header line joined at C speed (the values are text, as the type says): an
    # f-string per header in a comprehension cost some 10,000 instructions more a request.
    lines = [f"{method} {target} HTTP/1.1", *map(": ".join, headers.items())]
    text = "\r\n".join(lines)
    # One search of the whole head, not one per line: the only CR and LF are the
    # separators just put there.
    separators = len(lines) - 1
    if (
        _CONTROL_BUT_CRLF.search(text)
        or text.count("\r") != separators
        or text.count("\n") != separators
    ):
        bad = next(line for line in lines if HEADER_CONTROL.search(line))
        raise ValueError(f"forbidden control character in the request head: {bad!r}")
    return (text + "\r\n\r\n").encode("utf-8", "surrogateescape")


def chunk_frame(chunk: bytes) -> bytes:
    """``chunk`` in the chunked transfer coding."""
    return b"%x\r\n%b\r\n" % (len(chunk), chunk)


LAST_CHUNK = b"0\r\n\r\n"


class UpstreamResponse:
    """The upstream's response: its head, then its body as it arrives. Leaving
    ``async with`` (or :meth:`release`) gives the connection back to the pool when
    the body was read to its clean end, and closes it otherwise."""

    def __init__(self, client: UpstreamClient, conn: UpstreamConnection) -> None:
        self._client = client
        self._conn = conn
        self.status = conn.status
        self.reason = conn.reason
        #: The head's headers in order, duplicates kept.
        self.headers: CIMultiDict[str] = CIMultiDict(conn.headers)

    async def __aenter__(self) -> UpstreamResponse:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.release()

    async def chunks(self) -> AsyncIterator[bytes]:
        """The body, chunk by chunk as it arrives (raises :class:`UpstreamClosed`
        where it broke off)."""
        while chunk := await self._conn.next_chunk():
            yield chunk

    def next_chunk(self) -> Coroutine[Any, Any, bytes]:
        """The body's next chunk, ``b""`` at its end: :meth:`chunks` one at a time,
        for a hot loop (no asynchronous generator to create, step and close)."""
        return self._conn.next_chunk()

    def at_eof(self) -> bool:
        """Whether the body's clean end has come and every chunk was taken."""
        return self._conn.at_eof()

    def buffered(self) -> bool:
        """Whether the body's next chunk, or its end, is in already."""
        return self._conn.buffered()

    def whole(self) -> bool:
        """Whether the whole body is in already: reading it waits for nothing."""
        return self._conn.complete

    async def read(self) -> bytes:
        """The whole body."""
        return b"".join([chunk async for chunk in self.chunks()])

    def release(self) -> None:
        self._client.release(self._conn)


class UpstreamClient:
    """Requests to one upstream origin over a pool of kept-alive connections."""

    def __init__(self, origin: str, *, ssl_context: ssl.SSLContext | None = None) -> None:
        parts = urlsplit(origin)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"{origin!r}: expected an http:// or https:// origin")
        self.host = parts.hostname
        self.port = parts.port or (443 if parts.scheme == "https" else 80)
        self.authority = parts.netloc.rpartition("@")[2]
        self._ssl: ssl.SSLContext | None = None
        if parts.scheme == "https":
            self._ssl = ssl_context or ssl.create_default_context()
        self._idle: list[UpstreamConnection] = []
        self._open: set[UpstreamConnection] = set()

    async def request(
        self,
        method: str,
        target: str,
        headers: CIMultiDict[str],
        body: Body = None,
        *,
        sent: Callable[[], None] | None = None,
    ) -> UpstreamResponse:
        """Send a request and return once the response head is in. A body of bytes
        is written at once (then ``sent`` is called); a streamed one is written
        chunk by chunk while the answer is awaited (an error it raises is raised
        here, or where the body is read). Raises :class:`UpstreamError` when the
        upstream gives no answer."""
        # One coroutine (the pool's connection taken without one): the answer's
        # wake-up resumes no more frames than it must.
        conn = self._pooled() or await self._connect()
        retried = False
        while True:
            try:
                self._send(conn, method, target, headers, body, sent)
                await conn.head
            except BaseException as exc:
                self._discard(conn)
                streamed = body is not None and not isinstance(body, bytes)
                if (
                    retried
                    or not isinstance(exc, UpstreamError)
                    or conn.answered
                    or conn.exchanges < 2
                    or streamed
                    or method not in IDEMPOTENT
                ):
                    raise
            else:
                return UpstreamResponse(self, conn)
            # A kept-alive connection the upstream closed as this request went out (its
            # idle timeout ran out): once more on a new connection, as aiohttp does.
            retried = True
            conn = await self._connect()

    def _send(
        self,
        conn: UpstreamConnection,
        method: str,
        target: str,
        headers: CIMultiDict[str],
        body: Body,
        sent: Callable[[], None] | None,
    ) -> None:
        """Begin the exchange on ``conn``: the request written, or its writer started."""
        conn.begin(head_only=method == "HEAD")
        if "Host" not in headers:
            headers = CIMultiDict(headers, Host=self.authority)
        assert conn.transport is not None
        if body is None or isinstance(body, bytes):
            if body is not None:  # its length, whatever the client's headers said
                headers = CIMultiDict(headers)
                headers["Content-Length"] = str(len(body))
            conn.transport.write(request_head(method, target, headers) + (body or b""))
            if sent is not None:
                sent()
        else:
            framed = _chunked(headers)
            head = request_head(method, target, framed)
            conn.writer = asyncio.get_running_loop().create_task(
                _write_stream(conn, head, body, chunked=framed is not headers)
            )

    def release(self, conn: UpstreamConnection) -> None:
        """The exchange on ``conn`` is over: pool the connection, or close it."""
        if conn.reusable():
            conn.idle()
            self._idle.append(conn)
        else:
            self._discard(conn)

    async def close(self) -> None:
        """Close every connection, idle or busy."""
        for conn in list(self._open):
            self._discard(conn)
        await asyncio.sleep(0)  # let the transports close

    def _discard(self, conn: UpstreamConnection) -> None:
        conn.close()
        self._open.discard(conn)

    def _pooled(self) -> UpstreamConnection | None:
        """A pooled connection (the most recently used first), if one is fit."""
        while self._idle:
            conn = self._idle.pop()
            if conn.transport is not None and not conn.lost and not conn.transport.is_closing():
                return conn
            self._discard(conn)
        return None

    async def _connect(self) -> UpstreamConnection:
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(CONNECT_TIMEOUT):
                _, conn = await loop.create_connection(
                    lambda: UpstreamConnection(loop),
                    self.host,
                    self.port,
                    ssl=self._ssl,
                    server_hostname=self.host if self._ssl is not None else None,
                )
        except TimeoutError:
            raise UpstreamError(f"no connection within {CONNECT_TIMEOUT:g} s") from None
        except OSError as exc:  # refused, unknown host, TLS verification
            raise UpstreamError(f"cannot connect to {self.authority}: {exc}") from exc
        self._open.add(conn)
        return conn


def _chunked(headers: CIMultiDict[str]) -> CIMultiDict[str]:
    """The headers of a streamed body: chunked unless they give its length."""
    if "Content-Length" in headers:
        return headers
    return CIMultiDict(headers, **{"Transfer-Encoding": "chunked"})


async def _write_stream(
    conn: UpstreamConnection, head: bytes, body: AsyncIterable[bytes], *, chunked: bool
) -> None:
    """Write a request whose body arrives in pieces; a failure (the body's source's,
    or the connection's) fails the exchange with it."""
    transport = conn.transport
    assert transport is not None
    try:
        transport.write(head)
        async for chunk in body:
            if chunk:
                transport.write(chunk_frame(chunk) if chunked else chunk)
                await conn.drain()
        if chunked:
            transport.write(LAST_CHUNK)
    except asyncio.CancelledError:
        raise
    except BaseException as exc:
        conn.fail(exc)
