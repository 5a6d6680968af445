"""Start a server the way an MCP client does from its config file, and talk to it.

Usage::

    python tests/peers/config_client.py --config FILE --server NAME --era modern|legacy

Reads ``FILE`` (strict JSON; the servers under ``mcpServers``, or VS Code's
``servers``), takes the entry ``NAME`` and starts its ``command`` with its
``args`` and its ``env`` laid over the SDK's default environment, as Claude
Desktop and the SDK-based clients do (not this process's environment:
what the entry does not say, the server does not get). Then holds the common
conversation (``conversation.common_calls``) and prints its JSON report.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import mcp_types as types
from conversation import MODES, common_calls, hold
from mcp import Client
from mcp.client.stdio import StdioServerParameters

DEADLINE_S = 24.0


def entry_of(config: Path, name: str) -> dict[str, Any]:
    document = json.loads(config.read_text(encoding="utf-8"))
    servers = document.get("mcpServers", document.get("servers", {}))
    entry: dict[str, Any] = servers[name]
    return entry


async def converse(era: str, entry: dict[str, Any]) -> dict[str, Any]:
    params = StdioServerParameters(
        command=entry["command"], args=entry.get("args", []), env=entry.get("env")
    )
    updates: list[float] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        updates.append(progress)

    client_info = types.Implementation(name="mcpeek-config-client", version="0.1.0")
    async with Client(
        params,
        mode=MODES[era],
        client_info=client_info,
        cache=None,
        read_timeout_seconds=DEADLINE_S,
    ) as client:
        outcome = await common_calls(client, era, True, on_progress)
    return {**outcome, "progress": len(updates)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--config", type=Path, required=True)
    parser.add_argument("--server", required=True)
    parser.add_argument("--era", choices=["modern", "legacy"], required=True)
    args = parser.parse_args(argv)
    entry = entry_of(args.config, args.server)
    return hold(
        "config_client",
        args.era,
        lambda: converse(args.era, entry),
        DEADLINE_S,
        f"no complete conversation within {DEADLINE_S:g} s",
    )


if __name__ == "__main__":
    sys.exit(main())
