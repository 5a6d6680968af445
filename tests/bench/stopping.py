"""How the benchmark's helper processes (upstream, reference relays) run until told.

Each prints ``listening <port>`` on stdout once it accepts connections, then
serves until SIGINT, SIGTERM or the end of its stdin (the benchmark closes it
to stop a helper, and a benchmark that dies closes it too).
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import Callable, Coroutine
from typing import Any


async def announce_and_wait(port: int) -> None:
    """Say the port, then return once the helper is told to stop."""
    print(f"listening {port}", flush=True)
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)

    def stdin_closed() -> None:
        if not os.read(sys.stdin.fileno(), 1 << 12):
            stop.set()

    loop.add_reader(sys.stdin.fileno(), stdin_closed)
    try:
        await stop.wait()
    finally:
        loop.remove_reader(sys.stdin.fileno())


async def serve_until_told(server: asyncio.AbstractServer) -> None:
    """Say ``server``'s port, serve until told to stop, then close it."""
    try:
        await announce_and_wait(server.sockets[0].getsockname()[1])
    finally:
        server.close()


def relay_main(serve: Callable[[str], Coroutine[Any, Any, None]]) -> int:
    """A reference relay's ``main``: ``serve`` the upstream origin its command line names."""
    asyncio.run(serve(sys.argv[1].rstrip("/")))
    return 0
