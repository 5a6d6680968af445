"""Real-SDK stdio MCP server offering everything the example captures show.

``sdk_server.py`` plus the multi round-trip tool ``confirm`` that, until now,
only ``sdk_http_server.py`` offered; built only with the official ``mcp`` SDK's
``MCPServer`` and served with ``MCPServer.run("stdio")`` (the SDK's dual-era
loop: the client's first request picks 2026-07-28 or 2025-11-25).

Offered:

* tools ``add``, ``count`` (progress), ``get_weather`` (see ``common_tools.py``)
* tool ``confirm(question: str) -> str``: asks the client a yes/no question
  through the SDK's resolver API (``Resolve`` + ``Elicit``).  At 2026-07-28 that
  is a multi round-trip (``InputRequiredResult``, then the client's retry with
  ``inputResponses``); at 2025-11-25 an ``elicitation/create`` request from the
  server to the client in the middle of the call.
* prompt ``greet(name: str)`` and resource ``mcpeek://hello``

stdout carries protocol only; a single line ``sdk_tour_server: ready`` goes to
stderr.  ``python -m mcpeek.inspector.tools.record_examples`` records the example
captures in ``captures/`` with it.

Run:  python tests/peers/sdk_tour_server.py
"""

from __future__ import annotations

import sys
from typing import Annotated

from common_tools import add_common
from mcp.server.mcpserver import (
    AcceptedElicitation,
    Elicit,
    ElicitationResult,
    MCPServer,
    Resolve,
)
from pydantic import BaseModel, Field

server: MCPServer = MCPServer(name="mcpeek-sdk-tour-server", version="0.1.0", log_level="WARNING")

add_common(server, "sdk_tour_server")


class Confirmation(BaseModel):
    """What the client is asked to fill in."""

    confirm: bool = Field(description="yes (true) or no (false)")


def ask_confirmation(question: str) -> Elicit[Confirmation]:
    """Resolver: ask the client (elicitation, form mode) to answer ``question``."""
    return Elicit(question, Confirmation)


@server.tool()
def confirm(
    question: str,
    answer: Annotated[ElicitationResult[Confirmation], Resolve(ask_confirmation)],
) -> str:
    """Ask the client a yes/no question (an elicitation), then report the answer."""
    if isinstance(answer, AcceptedElicitation):
        return f"{'confirmed' if answer.data.confirm else 'refused'}: {question}"
    return f"{answer.action}: {question}"


def main() -> int:
    if sys.argv[1:]:
        print("usage: sdk_tour_server.py  (no arguments)", file=sys.stderr)
        return 2
    print("sdk_tour_server: ready", file=sys.stderr, flush=True)
    server.run("stdio")
    return 0


if __name__ == "__main__":
    sys.exit(main())
