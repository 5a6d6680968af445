"""Running the captures' MCP server: on stdio, or on Streamable HTTP on a loopback port.

On stdio, mcpeek's stdin and stdout are the protocol pipe (as in ``mcpeek
stdio``): nothing else is printed there. On HTTP the SDK's app is served by
uvicorn on a loopback address only, with the SDK's DNS-rebinding protection
(Host and Origin must be loopback ones); once it accepts connections one
line goes to stderr: ``mcpeek: mcp server on http://HOST:PORT/mcp``.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import sys

from mcpeek.inspector.assist.server import AssistServer

PATH = "/mcp"
GRACE = 2  # seconds open streams get to end when the server is stopped


def serve_stdio(server: AssistServer) -> None:
    server.run("stdio")


def listen_socket(host: str, port: int) -> socket.socket:
    """The listening socket, bound before anything starts: a port in use is the
    caller's one-line error, not a web server's log and exit code."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    return sock


def serve_http(server: AssistServer, sock: socket.socket) -> None:
    """Serve until Ctrl-C (or SIGTERM), which is how this server is meant to stop."""
    # uvicorn shuts down gracefully on the signal, then raises it again for us.
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve_http(server, sock))


async def _serve_http(server: AssistServer, sock: socket.socket) -> None:
    import uvicorn

    host, port = sock.getsockname()[:2]
    app = server.streamable_http_app(streamable_http_path=PATH, host=host)
    # log_config=None: uvicorn installs no handlers of its own; its records go where
    # the caller sends them (mcpeek mcp: one-line mcpeek: messages).
    config = uvicorn.Config(
        app,
        log_level="warning",
        log_config=None,
        lifespan="on",
        timeout_graceful_shutdown=GRACE,
    )
    web = uvicorn.Server(config)

    async def announce() -> None:
        while not web.started:  # the lifespan is up and the socket accepts
            if web.should_exit:
                return
            await asyncio.sleep(0.02)
        shown = f"[{host}]" if ":" in host else host
        print(f"mcpeek: mcp server on http://{shown}:{port}{PATH}", file=sys.stderr, flush=True)

    watcher = asyncio.create_task(announce())
    try:
        await web.serve(sockets=[sock])
    finally:
        watcher.cancel()
