"""Real-SDK stdio MCP server used as the upstream peer in mcpeek's end-to-end tests.

Built only with the official ``mcp`` SDK's high-level ``MCPServer`` class and served
with ``MCPServer.run("stdio")``.  That entry point drives the SDK's dual-era loop
(``mcp.server.runner.serve_dual_era_loop``): the client's *first request* decides
the era of the connection, so the same process serves

* a 2026-07-28 ("modern") client: stateless, no ``initialize``, every request
  carries ``_meta["io.modelcontextprotocol/protocolVersion"]``; and
* a 2025-11-25 ("legacy") client: ``initialize`` + ``notifications/initialized``.

No era flag is needed (``--era auto`` is accepted for symmetry and ignored;
``modern``/``legacy`` are refused because the SDK's public API has no single-era
stdio server).

Offered:

* tool ``add(a: int, b: int) -> int``  (structured output ``{"result": a+b}``)
* tool ``count(n: int) -> str``         (reports progress n times, returns "counted n")
* tool ``get_weather(city: str) -> str`` ("Sunny in <city>"); with
  ``--hold-weather FILE`` it answers only once FILE exists (a hung call on cue)
* prompt ``greet(name: str)`` and resource ``mcpeek://hello``

stdout carries protocol only; a single line ``sdk_server: ready`` goes to stderr.

Run:  python tests/peers/sdk_server.py
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from common_tools import add_common
from mcp.server.mcpserver import MCPServer

server: MCPServer = MCPServer(name="mcpeek-sdk-server", version="0.1.0", log_level="WARNING")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--era", choices=["auto"], default="auto", help="only 'auto' (dual era) is available"
    )
    parser.add_argument(
        "--hold-weather", type=Path, metavar="FILE", help="get_weather waits for FILE to exist"
    )
    args = parser.parse_args(argv)
    add_common(server, "sdk_server", hold_weather=args.hold_weather)
    print("sdk_server: ready", file=sys.stderr, flush=True)
    server.run("stdio")
    return 0


if __name__ == "__main__":
    sys.exit(main())
