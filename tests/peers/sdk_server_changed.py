"""Real-SDK stdio MCP server like ``sdk_server.py``, but changed: for replay's tests.

The same ``MCPServer`` with the same tools, prompt and resource (see
``common_tools.py``), except that ``get_weather(city)`` now answers
``"Rainy in <city>"`` where ``sdk_server.py`` answers ``"Sunny in <city>"``.
A capture recorded against ``sdk_server.py`` and replayed here with
``mcpeek replay`` must therefore show exactly one differing flow: the
``get_weather`` call (its ``content/0/text`` and ``structuredContent``).

stdout carries protocol only; a single line ``sdk_server_changed: ready`` goes
to stderr.

Run:  python tests/peers/sdk_server_changed.py
"""

from __future__ import annotations

import sys

from common_tools import add_common
from mcp.server.mcpserver import MCPServer

server: MCPServer = MCPServer(name="mcpeek-sdk-server", version="0.1.0", log_level="WARNING")
add_common(server, "sdk_server")
server.remove_tool("get_weather")


@server.tool()
def get_weather(city: str) -> str:
    """Return a (fake) weather report for a city."""
    return f"Rainy in {city}"


def main() -> int:
    print("sdk_server_changed: ready", file=sys.stderr, flush=True)
    server.run("stdio")
    return 0


if __name__ == "__main__":
    sys.exit(main())
