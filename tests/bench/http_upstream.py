"""A small, fast Streamable HTTP upstream for the HTTP relay benchmark.

    python tests/bench/http_upstream.py [PORT]

Listens on 127.0.0.1 (port 0, the default, picks a free one), prints
``listening <port>`` on stdout once it accepts connections, and answers every
JSON-RPC request POSTed to it:

* ``POST …/json``: ``200 application/json`` with a ~210-byte result;
* ``POST …/sse``: ``200 text/event-stream`` with two events, written
  separately: a ``notifications/progress`` for the request's progress token,
  then the same ~210-byte result;
* ``POST …/big``: ``200 application/json``, a result as big as the request
  (a 16 MB request gets a 16 MB answer), for the big-message benchmark;
* ``POST …/bigsse?size=N``: one SSE event whose result holds N bytes of text;
* ``POST …/stream?n=N``: N small SSE events (progress notifications), then
  the result: a long stream of small messages.

The request id and progress token are cut out of the body with byte
searches (no JSON parsing), so the server costs the same whether it sits
behind mcpeek or not. The messages are modern (2026-07-28) and valid, so the
proxy's live checks have nothing to flag. A notification POST gets ``202``.
It stops on SIGINT/SIGTERM or when its stdin reaches EOF.
"""

from __future__ import annotations

import asyncio
import sys

from aiohttp import web
from stopping import announce_and_wait

MCP = "io.modelcontextprotocol/"

ID_KEY = b'"id":'
TOKEN_KEY = b'"progressToken":'
RESULT_HEAD = b'{"jsonrpc":"2.0","id":'
RESULT_MID = b',"result":{"resultType":"complete","content":[{"type":"text","text":"'
RESULT_TAIL = (
    b'"}],"isError":false,"_meta":{"'
    + MCP.encode()
    + b'serverInfo":{"name":"bench-upstream","version":"1.0"}}}}'
)
PROGRESS_HEAD = (
    b'event: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress",'
    b'"params":{"progressToken":'
)
PROGRESS_TAIL = b',"progress":1,"total":2,"message":"halfway"}}\n\n'
TEXT = b"Sunny, 21 C"  # the whole result is about 210 bytes


def _value(body: bytes, key: bytes) -> bytes | None:
    """The raw JSON value after ``key`` (a number or a short string), or None."""
    at = body.find(key)
    if at < 0:
        return None
    start = at + len(key)
    end = start
    while end < len(body) and body[end] not in b",}]":
        end += 1
    return body[start:end].strip() or None


def result(ident: bytes) -> bytes:
    return b"".join((RESULT_HEAD, ident, RESULT_MID, TEXT, RESULT_TAIL))


async def handle(request: web.Request) -> web.StreamResponse:
    if request.method != "POST":
        return web.Response(status=405, headers={"Allow": "POST"})
    body = await request.read()
    ident = _value(body, ID_KEY)
    if ident is None:  # a notification (or a response)
        return web.Response(status=202)
    if request.path.endswith("/big"):
        pad = b"y" * max(len(body) - 200, 0)
        return web.Response(body=big_result(ident, pad), content_type="application/json")
    token = _value(body, TOKEN_KEY) or ident
    if request.path.endswith(("/bigsse", "/stream")):
        return await stream(request, ident, token)
    if not request.path.endswith("/sse"):
        return web.Response(body=result(ident), content_type="application/json")
    response = web.StreamResponse(
        headers={"Content-Type": "text/event-stream", "X-Accel-Buffering": "no"}
    )
    await response.prepare(request)
    await response.write(b"".join((PROGRESS_HEAD, token, PROGRESS_TAIL)))
    await response.write(b"".join((b"event: message\ndata: ", result(ident), b"\n\n")))
    await response.write_eof()
    return response


def big_result(ident: bytes, pad: bytes) -> bytes:
    return b"".join((RESULT_HEAD, ident, RESULT_MID, pad, RESULT_TAIL))


async def stream(request: web.Request, ident: bytes, token: bytes) -> web.StreamResponse:
    """One big event (``/bigsse``) or many small ones before the result (``/stream``)."""
    response = web.StreamResponse(
        headers={"Content-Type": "text/event-stream", "X-Accel-Buffering": "no"}
    )
    await response.prepare(request)
    if request.path.endswith("/stream"):
        n = int(request.query.get("n", "1000"))
        tail = b',"progress":%d,"total":' + b"%d" % n + b"}}\n\n"
        head = PROGRESS_HEAD + token
        for start in range(0, n, 1000):  # progress increases, as the spec wants
            await response.write(
                b"".join(head + tail % i for i in range(start, min(start + 1000, n)))
            )
        pad = TEXT
    else:
        pad = b"y" * int(request.query.get("size", str(16 << 20)))
    await response.write(b"".join((b"event: message\ndata: ", big_result(ident, pad), b"\n\n")))
    await response.write_eof()
    return response


async def serve(port: int) -> None:
    app = web.Application(client_max_size=1 << 30)
    app.router.add_route("*", "/{tail:.*}", handle)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", port, backlog=1024)
    await site.start()
    server = site._server
    sockets = getattr(server, "sockets", None) or []
    try:
        await announce_and_wait(sockets[0].getsockname()[1])
    finally:
        await runner.cleanup()


def main() -> int:
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    asyncio.run(serve(port))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
