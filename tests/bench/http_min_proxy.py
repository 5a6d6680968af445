"""The least an HTTP-aware Python proxy costs: the "parsing relay" reference of the HTTP benchmark.

    python tests/bench/http_min_proxy.py UPSTREAM_ORIGIN

Between the plain byte relay (``tcp_relay.py``, which parses nothing) and a
real proxy: it does only what any proxy that sees each message must do, at
the lowest level Python offers, and nothing else. Each client connection gets
one upstream connection (asyncio protocols, no streams, no tasks per
request). Each request is parsed with httptools (llhttp, in C): its head is
written again with ``Host`` set for the upstream and the hop-by-hop headers
dropped, its body forwarded as it arrives (a chunked body chunked again).
Each response is parsed too, so that its body's pieces are seen where they
end, but its bytes are forwarded unchanged. It records, redacts and checks
nothing, guards no Host or Origin, streams no SSE event apart. What mcpeek
costs beyond it is what its features cost; what it costs beyond the plain
relay is what parsing HTTP in Python costs. It stops on SIGINT/SIGTERM or
when its stdin reaches EOF.
"""

from __future__ import annotations

import asyncio
from urllib.parse import urlsplit

import httptools
from stopping import relay_main, serve_until_told

from mcpeek.inspector.proxy.http_headers import HOP_BY_HOP as RELAY_HOP_BY_HOP

# The relay's own hop-by-hop set (as mcpeek drops them), Host (set for the upstream),
# and the framing headers this proxy writes itself.
DROPPED = {
    name.encode() for name in RELAY_HOP_BY_HOP | {"host", "content-length", "transfer-encoding"}
}


class Upstream(asyncio.Protocol):
    """The upstream side of one client connection: responses forwarded as they come."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.transport: asyncio.Transport | None = None
        self.parser = httptools.HttpResponseParser(self)
        self.body_pieces = 0

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        client = self.client.transport
        if client is None or client.is_closing():
            return
        client.write(data)  # unchanged, first; parsed after
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError:
            client.close()
            return

    def on_body(self, body: bytes) -> None:
        self.body_pieces += 1  # (a proxy that records would keep the bytes here)

    def pause_writing(self) -> None:  # (the upstream reads slower than the client sends)
        if self.client.transport is not None:
            self.client.transport.pause_reading()

    def resume_writing(self) -> None:
        if self.client.transport is not None:
            self.client.transport.resume_reading()

    def connection_lost(self, exc: Exception | None) -> None:
        if self.client.transport is not None:
            self.client.transport.close()


class Client(asyncio.Protocol):
    """One client connection: requests parsed, rewritten and sent upstream."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.host_header = f"{host}:{port}".encode()
        self.transport: asyncio.Transport | None = None
        self.upstream: Upstream | None = None
        self.parser = httptools.HttpRequestParser(self)
        self.url = b""
        self.headers: list[tuple[bytes, bytes]] = []
        self.chunked = False
        self.pending: list[bytes] = []  # what waits for the upstream connection

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        asyncio.get_running_loop().create_task(self._connect())

    async def _connect(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            _, upstream = await loop.create_connection(lambda: Upstream(self), self.host, self.port)
        except OSError:
            if self.transport is not None:
                self.transport.close()
            return
        self.upstream = upstream
        if self.pending and upstream.transport is not None:
            upstream.transport.writelines(self.pending)
        self.pending.clear()

    def _send(self, data: bytes) -> None:
        upstream = self.upstream
        if upstream is None or upstream.transport is None:
            self.pending.append(data)
        else:
            upstream.transport.write(data)

    def data_received(self, data: bytes) -> None:
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError:
            if self.transport is not None:
                self.transport.close()

    def on_message_begin(self) -> None:
        self.url = b""
        self.headers = []

    def on_url(self, url: bytes) -> None:
        self.url += url

    def on_header(self, name: bytes, value: bytes) -> None:
        self.headers.append((name, value))

    def on_headers_complete(self) -> None:
        parser = self.parser
        method = parser.get_method()
        length = None
        self.chunked = False
        lines = [method + b" " + self.url + b" HTTP/1.1", b"Host: " + self.host_header]
        for name, value in self.headers:
            lower = name.lower()
            if lower == b"content-length":
                length = value
            elif lower == b"transfer-encoding":
                self.chunked = True
            if lower not in DROPPED:
                lines.append(name + b": " + value)
        if self.chunked:
            lines.append(b"Transfer-Encoding: chunked")
        elif length is not None:
            lines.append(b"Content-Length: " + length)
        self._send(b"\r\n".join(lines) + b"\r\n\r\n")

    def on_body(self, body: bytes) -> None:
        if self.chunked:
            self._send(b"%x\r\n%b\r\n" % (len(body), body))
        else:
            self._send(body)

    def on_message_complete(self) -> None:
        if self.chunked:
            self._send(b"0\r\n\r\n")

    def pause_writing(self) -> None:  # (the client reads slower than the upstream sends)
        if self.upstream is not None and self.upstream.transport is not None:
            self.upstream.transport.pause_reading()

    def resume_writing(self) -> None:
        if self.upstream is not None and self.upstream.transport is not None:
            self.upstream.transport.resume_reading()

    def connection_lost(self, exc: Exception | None) -> None:
        if self.upstream is not None and self.upstream.transport is not None:
            self.upstream.transport.close()


async def serve(origin: str) -> None:
    parts = urlsplit(origin)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: Client(host, port), "127.0.0.1", 0, backlog=1024)
    await serve_until_told(server)


if __name__ == "__main__":
    raise SystemExit(relay_main(serve))
