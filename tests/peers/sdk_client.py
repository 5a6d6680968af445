"""Real-SDK stdio MCP client used as the downstream peer in mcpeek's end-to-end tests.

Usage::

    python tests/peers/sdk_client.py --era modern|legacy|auto [--no-discover] -- CMD [ARG...]

Spawns ``CMD`` as a stdio MCP server with the official ``mcp`` SDK (``mcp.Client``
over ``StdioServerParameters``; no hand-written JSON-RPC) and runs one conversation:

* ``--era modern``: protocol 2026-07-28, pinned with ``Client(mode="2026-07-28")``
  (never falls back to ``initialize``).  The SDK's pinned mode sends nothing at
  connect time, so we then send one ``server/discover`` ourselves via the public
  ``ClientSession.send_discover`` and ``adopt()`` the answer (this is exactly what
  the SDK's ``mode="auto"`` probe does, minus the legacy fallback).
  ``--no-discover`` skips that probe: the first request on the wire is tools/list.
* ``--era legacy``: protocol 2025-11-25 via ``Client(mode="legacy")``:
  ``initialize`` + ``notifications/initialized``, no discover probe.
* ``--era auto``: the SDK default (discover probe, fall back to initialize).

Then: tools/list, tools/call add(2,3), tools/call count(3) with a progress
callback, tools/call get_weather("Paris").

Prints ONE JSON object to stdout and exits 0::

    {"era", "protocol_version", "tools", "add", "progress", "weather"}

On any failure (a protocol-version mismatch with the requested era, an isError
tool result, the 24 s conversation deadline, ...) it prints the error to stderr and
exits 1; the whole process stays under 30 s even against a mute server.
The child inherits this process's full environment (the SDK default would pass
only a safe subset), so a proxy under test sees its MCPEEK_* settings.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

import mcp_types as types
from conversation import MODES, common_calls, hold
from mcp import Client
from mcp.client.stdio import StdioServerParameters

DEADLINE_S = 24.0
"""Conversation deadline. Plus ~2 s of imports and the SDK's <=4 s child shutdown
(stdin close, then SIGTERM, then SIGKILL), the whole process stays under 30 s."""


async def converse(era: str, discover: bool, command: list[str]) -> dict[str, Any]:
    params = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
    mode = MODES[era]
    updates: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        updates.append((progress, total, message))

    client_info = types.Implementation(name="mcpeek-sdk-client", version="0.1.0")
    # cache=None: every list/call must reach the wire (the proxy under test must see it).
    async with Client(
        params, mode=mode, client_info=client_info, cache=None, read_timeout_seconds=DEADLINE_S
    ) as client:
        outcome = await common_calls(client, era, discover, on_progress)
    return {**outcome, "progress": len(updates)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Run one MCP conversation with the official SDK client."
    )
    parser.add_argument("--era", choices=["modern", "legacy", "auto"], required=True)
    parser.add_argument(
        "--no-discover", action="store_true", help="modern: skip the server/discover probe"
    )
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- CMD [ARG...]")
    args = parser.parse_args(argv)
    command: list[str] = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("missing server command after --")

    return hold(
        "sdk_client",
        args.era,
        lambda: converse(args.era, not args.no_discover, command),
        DEADLINE_S,
        f"no complete conversation within {DEADLINE_S:g} s",
    )


if __name__ == "__main__":
    sys.exit(main())
