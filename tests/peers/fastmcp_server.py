"""A server written with the third-party ``fastmcp`` framework (pinned in pyproject's dev extra).

Usage::

    python tests/peers/fastmcp_server.py                      # stdio
    python tests/peers/fastmcp_server.py --http --port PORT   # Streamable HTTP on /mcp

Everything is fastmcp's own machinery: tools ``add(a, b)``, ``slow(steps, pause=0)``
(one ``ctx.info`` log line, one ``ctx.report_progress`` per step with a pause after
each, then ``"slow done"``), resource ``fastmcp://motd``, prompt ``greet(name)``. On HTTP it
prints ``fastmcp_server: listening on URL`` to stderr once the port accepts
connections (fastmcp's own start-up lines are silenced: no banner).
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import sys
import threading
import time

from fastmcp import Context, FastMCP

mcp = FastMCP("mcpeek-fastmcp-server")


@mcp.tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@mcp.tool
async def slow(steps: int, ctx: Context, pause: float = 0.0) -> str:
    """Report progress once per step, pausing ``pause`` seconds after each."""
    await ctx.info(f"slow: {steps} steps")
    for step in range(1, steps + 1):
        await ctx.report_progress(step, steps)
        await asyncio.sleep(pause)
    return "slow done"


@mcp.resource("fastmcp://motd")
def motd() -> str:
    return "hello from fastmcp"


@mcp.prompt
def greet(name: str) -> str:
    return f"Say hello to {name}."


def announce_when_listening(port: int, url: str) -> None:
    """uvicorn logs nothing once quiet: poll the port, then say so on stderr."""
    for _ in range(300):
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                print(f"fastmcp_server: listening on {url}", file=sys.stderr, flush=True)
                return
        except OSError:
            time.sleep(0.05)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--http", action="store_true")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    if not args.http:
        mcp.run("stdio", show_banner=False)
        return
    url = f"http://127.0.0.1:{args.port}/mcp"
    threading.Thread(target=announce_when_listening, args=(args.port, url), daemon=True).start()
    mcp.run("http", show_banner=False, host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
