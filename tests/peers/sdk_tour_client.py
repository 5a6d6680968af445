"""Real-SDK MCP client that tours every feature the example captures show.

Usage::

    python tests/peers/sdk_tour_client.py --era modern|legacy -- CMD [ARG...]   # stdio
    python tests/peers/sdk_tour_client.py --era modern|legacy --url URL         # Streamable HTTP

Only the official ``mcp`` SDK's ``mcp.Client`` (no hand-written JSON-RPC).  The
conversation is the one ``sdk_client.py`` / ``sdk_http_client.py`` hold
(``conversation.common_calls``: the era's opening, tools/list, add(2, 3),
count(3) with progress, get_weather("Paris")), then:

* tools/call ``confirm("Proceed?")``, its elicitation answered ``{"confirm": true}``
  (2026-07-28: a multi round-trip chain; 2025-11-25: a server-to-client
  ``elicitation/create`` request);
* resources/list, resources/read ``mcpeek://hello``;
* prompts/list, prompts/get ``greet(name="Ada")``.

The server must offer ``confirm`` (``sdk_tour_server.py`` on stdio,
``sdk_http_server.py`` over HTTP).  Prints ONE JSON object and exits 0::

    {"era", "protocol_version", "tools", "add", "progress", "weather",
     "confirm", "elicitations", "resources", "resource_text", "prompts", "prompt"}

Any failure: the error and a traceback on stderr, exit 1 (usage: exit 2).  The
conversation deadline is 25 s and a watchdog ends the process at 28 s.  The
stdio server inherits this process's full environment.  The client response
cache is off, so every call reaches the wire.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
from typing import Any

import mcp_types as types
from conversation import MODES, checked, common_calls, hold, text
from mcp import Client
from mcp.client.session import ClientRequestContext
from mcp.client.stdio import StdioServerParameters

DEADLINE_S = 25.0
WATCHDOG_S = 28.0
QUESTION = "Proceed?"


async def converse(era: str, target: str | StdioServerParameters) -> dict[str, Any]:
    updates: list[float] = []
    elicitations: list[str | None] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        updates.append(progress)

    async def on_elicit(
        context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult | types.ErrorData:
        elicitations.append(getattr(params, "message", None))
        return types.ElicitResult(action="accept", content={"confirm": True})

    client_info = types.Implementation(name="mcpeek-sdk-tour-client", version="0.1.0")
    async with Client(
        target,
        mode=MODES[era],
        client_info=client_info,
        cache=None,
        read_timeout_seconds=DEADLINE_S,
        elicitation_callback=on_elicit,
    ) as client:
        outcome = await common_calls(client, era, True, on_progress)
        confirmed = text(
            checked("confirm", await client.call_tool("confirm", {"question": QUESTION}))
        )
        if confirmed != f"confirmed: {QUESTION}" or elicitations != [QUESTION]:
            raise RuntimeError(f"confirm: got {confirmed!r} after elicitations {elicitations!r}")
        resources = await client.list_resources()
        read = await client.read_resource("mcpeek://hello")
        prompts = await client.list_prompts()
        prompt = await client.get_prompt("greet", {"name": "Ada"})
    resource_text = "".join(getattr(c, "text", "") for c in read.contents)
    prompt_text = "".join(
        m.content.text for m in prompt.messages if isinstance(m.content, types.TextContent)
    )
    return {
        **outcome,
        "progress": len(updates),
        "confirm": confirmed,
        "elicitations": elicitations,
        "resources": [str(r.uri) for r in resources.resources],
        "resource_text": resource_text,
        "prompts": [p.name for p in prompts.prompts],
        "prompt": prompt_text,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--era", choices=["modern", "legacy"], required=True)
    parser.add_argument("--url", help="Streamable HTTP endpoint (instead of a stdio command)")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- CMD [ARG...] (stdio)")
    args = parser.parse_args(argv)
    command: list[str] = args.command[1:] if args.command[:1] == ["--"] else args.command
    if bool(command) == bool(args.url):
        parser.error("give either --url URL or -- CMD [ARG...]")
    target: str | StdioServerParameters = args.url or StdioServerParameters(
        command=command[0], args=command[1:], env=dict(os.environ)
    )

    def watchdog() -> None:
        print(f"sdk_tour_client: still running after {WATCHDOG_S:g} s, giving up", file=sys.stderr)
        os._exit(1)

    timer = threading.Timer(WATCHDOG_S, watchdog)
    timer.daemon = True
    timer.start()

    try:
        return hold(
            "sdk_tour_client",
            args.era,
            lambda: converse(args.era, target),
            DEADLINE_S,
            f"no complete conversation within {DEADLINE_S:g} s",
        )
    finally:
        timer.cancel()


if __name__ == "__main__":
    sys.exit(main())
