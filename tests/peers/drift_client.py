"""Real-SDK stdio MCP client that lists the tools, calls one, and lists them again.

Usage::

    python tests/peers/drift_client.py --era modern|legacy -- CMD [ARG...]

With ``drift_server.py`` upstream, the second ``tools/list`` shows the changed
definition. Prints one JSON line (the two descriptions of ``fetch`` and how many
``list_changed`` notifications the SDK delivered) and exits 0; on failure, the
error on stderr and exit 1.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

import mcp_types as types
from conversation import MODES, hold
from mcp import Client
from mcp.client.stdio import StdioServerParameters

DEADLINE_S = 24.0


def description(tools: types.ListToolsResult) -> str | None:
    return next((t.description for t in tools.tools if t.name == "fetch"), None)


async def converse(era: str, command: list[str]) -> dict[str, Any]:
    params = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
    client_info = types.Implementation(name="mcpeek-drift-client", version="0.1.0")
    # cache=None: every list must reach the wire (the proxy under test must see it).
    async with Client(
        params,
        mode=MODES[era],
        client_info=client_info,
        cache=None,
        read_timeout_seconds=DEADLINE_S,
    ) as client:
        before = description(await client.list_tools())
        called = await client.call_tool("fetch", {"url": "https://example.com"})
        after = description(await client.list_tools())
    return {"era": era, "before": before, "after": after, "called": not called.is_error}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--era", choices=["modern", "legacy"], required=True)
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- CMD [ARG...]")
    args = parser.parse_args(argv)
    command: list[str] = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("missing server command after --")
    return hold(
        "drift_client",
        args.era,
        lambda: converse(args.era, command),
        DEADLINE_S,
        f"no complete conversation within {DEADLINE_S:g} s",
    )


if __name__ == "__main__":
    sys.exit(main())
