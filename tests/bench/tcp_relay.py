"""A plain TCP byte relay: the "plain relay" reference of the HTTP relay benchmark.

    python tests/bench/tcp_relay.py UPSTREAM_ORIGIN

Listens on 127.0.0.1 (a free port, printed as ``listening <port>`` on stdout)
and, for each client connection, opens one connection to the upstream and
copies bytes both ways as they arrive, on asyncio. It parses nothing, so it
cannot rewrite ``Host`` or drop hop-by-hop headers: it is the least any
Python relay on this machine can cost, not a usable HTTP proxy. The issue's
fallback target is measured against it ("if a plain relay itself gets less
than 0.7x on the machine of the day, >= 0.85x of the plain relay"). It stops
on SIGINT/SIGTERM or when its stdin reaches EOF.
"""

from __future__ import annotations

import asyncio
import contextlib
from urllib.parse import urlsplit

from stopping import relay_main, serve_until_told

CHUNK = 256 * 1024


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(CHUNK):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        with contextlib.suppress(OSError, RuntimeError):
            writer.write_eof() if writer.can_write_eof() else writer.close()


async def serve(origin: str) -> None:
    parts = urlsplit(origin)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80

    async def relay(client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        try:
            up_r, up_w = await asyncio.open_connection(host, port)
        except OSError:
            client_w.close()
            return
        try:
            await asyncio.gather(_pipe(client_r, up_w), _pipe(up_r, client_w))
        except asyncio.CancelledError:
            # The relay stops with connections open. Python 3.11's stream server asks
            # a cancelled handler for its exception, which raises and prints a
            # traceback per connection: end this one quietly instead.
            pass
        finally:
            up_w.close()
            client_w.close()

    server = await asyncio.start_server(relay, "127.0.0.1", 0, backlog=1024)
    await serve_until_told(server)


if __name__ == "__main__":
    raise SystemExit(relay_main(serve))
