"""What the relay's upstream client puts on the wire and takes from it: the request
head's bytes, the chunked framing, a compressed body left as it is."""

from __future__ import annotations

import gzip

import pytest
from aiohttp import web
from multidict import CIMultiDict

from mcpeek.inspector.proxy.upstream import UpstreamClient, chunk_frame, request_head


def test_the_request_head_keeps_order_duplicates_and_odd_bytes() -> None:
    headers = CIMultiDict(
        [("Host", "h"), ("X-B", "2"), ("x-a", "1"), ("X-B", "3"), ("X-Weird", "\udcff\udcfe")]
    )
    assert request_head("POST", "/a/../b?%7e", headers) == (
        b"POST /a/../b?%7e HTTP/1.1\r\nHost: h\r\nX-B: 2\r\nx-a: 1\r\nX-B: 3\r\n"
        b"X-Weird: \xff\xfe\r\n\r\n"
    )
    for bad in ("a\r\nInjected: 1", "a\rb", "a\nb", "a\x00", "a\x0bb", "a\x7f"):
        with pytest.raises(ValueError, match="control character"):
            request_head("GET", "/", CIMultiDict([("X", bad)]))
    with pytest.raises(ValueError, match="control character"):
        request_head("GET", "/\r\nInjected: 1", CIMultiDict())
    assert request_head("GET", "/", CIMultiDict([("X", "a\tb")])).endswith(b"X: a\tb\r\n\r\n")
    assert chunk_frame(b"x" * 26) == b"1a\r\n" + b"x" * 26 + b"\r\n"


async def test_gzip_is_passed_through_compressed(aiohttp_server) -> None:  # type: ignore[no-untyped-def]
    packed = gzip.compress(b'{"jsonrpc":"2.0","id":1,"result":{}}')

    async def handler(request: web.Request) -> web.Response:
        return web.Response(body=packed, headers={"Content-Encoding": "gzip"})

    app = web.Application()
    app.router.add_get("/", handler)
    server = await aiohttp_server(app)
    client = UpstreamClient(str(server.make_url("")).rstrip("/"))
    async with await client.request("GET", "/", CIMultiDict()) as response:
        assert response.headers["Content-Encoding"] == "gzip"
        assert await response.read() == packed
    await client.close()
