"""Real-SDK Streamable HTTP server like ``sdk_http_server.py``, but changed: for replay's tests.

The same ``MCPServer`` app, options and ``listening on`` line (it *is*
``sdk_http_server``'s server), except that ``get_weather(city)`` answers
``"Rainy in <city>"`` where ``sdk_http_server.py`` answers ``"Sunny in <city>"``
(as ``sdk_server_changed.py`` does over stdio). A capture recorded against
``sdk_http_server.py`` and replayed here must differ in the ``get_weather``
call only.

Run:  python tests/peers/sdk_http_server_changed.py --port 8765
"""

from __future__ import annotations

import sys

import sdk_http_server

server = sdk_http_server.server
server.remove_tool("get_weather")


@server.tool()
def get_weather(city: str) -> str:
    """Return a (fake) weather report for a city."""
    return f"Rainy in {city}"


if __name__ == "__main__":
    sys.exit(sdk_http_server.main())
