"""A bare aiohttp reverse proxy: the floor for ``mcpeek http`` in the HTTP relay benchmark.

    python tests/bench/http_bare_proxy.py UPSTREAM_ORIGIN

Listens on 127.0.0.1 (a free port, printed as ``listening <port>`` on stdout)
and relays every request to ``UPSTREAM_ORIGIN`` the way mcpeek's
``HttpRelay`` does (one pooled ``ClientSession``; the request body read
whole; the response streamed with ``iter_any``; hop-by-hop headers dropped;
no decompression), but records, checks and rewrites nothing. What mcpeek
costs beyond it is what recording and checking cost; what it costs over a
direct connection is what any Python proxy built on aiohttp costs. It stops
on SIGINT/SIGTERM or when its stdin reaches EOF.
"""

from __future__ import annotations

import asyncio
import sys
from urllib.parse import urlsplit

import aiohttp
from aiohttp import web
from multidict import CIMultiDict
from stopping import announce_and_wait

from mcpeek.inspector.proxy.http_headers import HOP_BY_HOP as RELAY_HOP_BY_HOP

# The relay's own hop-by-hop set (the bare proxy must drop what mcpeek drops), and
# Host, which it sets for the upstream.
HOP_BY_HOP = RELAY_HOP_BY_HOP | {"host"}


def end_to_end(headers: object) -> CIMultiDict[str]:
    return CIMultiDict((k, v) for k, v in headers.items() if k.lower() not in HOP_BY_HOP)  # type: ignore[attr-defined]


async def serve(origin: str) -> None:
    session = aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(limit=0),
        timeout=aiohttp.ClientTimeout(total=None, sock_connect=30, sock_read=None),
        auto_decompress=False,
        cookie_jar=aiohttp.DummyCookieJar(),
    )
    host = urlsplit(origin).netloc

    async def handle(request: web.Request) -> web.StreamResponse:
        body = await request.read()
        headers = end_to_end(request.headers)
        headers["Host"] = host
        async with session.request(
            request.method,
            origin + request.path_qs,
            headers=headers,
            data=body or None,
            allow_redirects=False,
            skip_auto_headers=("Accept-Encoding", "User-Agent", "Accept", "Content-Type"),
        ) as upstream:
            response = web.StreamResponse(
                status=upstream.status, reason=upstream.reason, headers=end_to_end(upstream.headers)
            )
            length = upstream.headers.get("Content-Length")
            if length is not None and length.isdigit():
                response.content_length = int(length)
            await response.prepare(request)
            async for chunk in upstream.content.iter_any():
                await response.write(chunk)
            await response.write_eof()
            return response

    app = web.Application(client_max_size=256 * 1024 * 1024)
    app.router.add_route("*", "/{tail:.*}", handle)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0, backlog=1024)
    await site.start()
    sockets = getattr(site._server, "sockets", None) or []
    try:
        await announce_and_wait(sockets[0].getsockname()[1])
    finally:
        await runner.cleanup()
        await session.close()


def main() -> int:
    asyncio.run(serve(sys.argv[1].rstrip("/")))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
