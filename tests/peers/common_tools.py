"""The tools, prompt and resource every SDK test server offers, on either transport."""

from __future__ import annotations

import os
from pathlib import Path

import anyio
from mcp.server.mcpserver import Context, MCPServer

HOLD_POLL_S = 0.05  # how often a held get_weather looks for its release file
#: When set, each tool appends its name to this file: the server's own log of
#: the calls it saw (the tests of answering in place check it never saw one).
TOOL_LOG = "MCPEEK_TEST_TOOL_LOG"


def _log(tool: str) -> None:
    path = os.environ.get(TOOL_LOG)
    if path:
        with open(path, "a", encoding="utf-8") as log:
            log.write(tool + "\n")


def add_common(server: MCPServer, name: str, hold_weather: Path | None = None) -> None:
    """Register add, count (with progress), get_weather, the greet prompt and
    the mcpeek://hello resource (whose text names the server).

    With ``hold_weather``, get_weather answers only once that file exists: a call
    that stays in flight for as long as a test wants (a hung call, on cue)."""

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        _log("add")
        return a + b

    @server.tool()
    async def count(n: int, ctx: Context) -> str:
        """Report progress n times, then return "counted n"."""
        for i in range(1, n + 1):
            await ctx.report_progress(i, n, f"step {i}/{n}")
        return f"counted {n}"

    add_weather(server, hold_weather)

    @server.prompt()
    def greet(name: str) -> str:
        """A tiny prompt."""
        return f"Say hello to {name}."

    @server.resource("mcpeek://hello", mime_type="text/plain")
    def hello() -> str:
        """A tiny static resource."""
        return f"hello from {name}"


def add_weather(server: MCPServer, hold_weather: Path | None = None) -> None:
    """Register get_weather ("Sunny in <city>"); with ``hold_weather``, held until
    that file exists (a server may swap a plain one for a held one by name)."""

    @server.tool()
    async def get_weather(city: str) -> str:
        """Return a (fake) weather report for a city."""
        _log("get_weather")
        while hold_weather is not None and not hold_weather.exists():
            await anyio.sleep(HOLD_POLL_S)
        return f"Sunny in {city}"
