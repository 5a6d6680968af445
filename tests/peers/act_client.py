"""Real-SDK client for the tests of acting on traffic (faults, scripts), stdio or HTTP.

Usage::

    python tests/peers/act_client.py --era modern|legacy [--timeout S] (--url URL | -- CMD...)

Opens the era (``server/discover`` for modern, ``initialize`` for legacy) with
the official ``mcp.Client``, then calls ``add(2, 3)`` and
``get_weather("Paris")``, each with a read timeout of ``--timeout`` seconds.
A call that fails does not end the run: each call's outcome is reported.

Prints ONE JSON object and exits 0::

    {"era", "add": CALL, "weather": CALL}

or, with ``--await-list-changed S``, ``{"era", "relisted": N | null}`` (the number
of tools listed again after the notification, null when none came). Over
HTTP in the modern era it listens (``subscriptions/listen``) while it waits:
a 2026-07-28 server has no other stream to send a change notification on.

where CALL is ``{"text", "error": [code, message] | null, "timeout": bool, "seconds"}``.
Exits 1 when the conversation itself could not be held (the opening failed).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
from typing import Any

import anyio
import mcp_types as types
from conversation import MODES, hold, text
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError
from mcp_types.version import LATEST_MODERN_VERSION

DEADLINE_S = 40.0


async def call(client: Client, name: str, arguments: dict[str, Any], timeout: float) -> dict:
    started = time.monotonic()
    outcome: dict[str, Any] = {"text": None, "error": None, "timeout": False}
    try:
        result = await client.call_tool(name, arguments, read_timeout_seconds=timeout)
        outcome["text"] = text(result)
    except MCPError as exc:
        outcome["error"] = [exc.error.code, exc.error.message]
        outcome["timeout"] = "timed out" in exc.error.message.lower()
    except TimeoutError:
        outcome["timeout"] = True
    outcome["seconds"] = round(time.monotonic() - started, 3)
    return outcome


async def converse(
    era: str, timeout: float, url: str | None, command: list[str], await_changed: float | None
) -> dict:
    server: Any = url
    changed = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()

    if url is None:
        server = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
    info = types.Implementation(name="mcpeek-act-client", version="0.1.0")
    async with Client(
        server,
        mode=MODES[era],
        client_info=info,
        cache=None,
        read_timeout_seconds=DEADLINE_S,
        message_handler=on_message,
    ) as client:
        if era == "modern":
            raw = await client.session.send_discover(LATEST_MODERN_VERSION)
            client.session.adopt(types.DiscoverResult.model_validate(raw))
        if await_changed is not None:  # the SDK tells; listing again is the client's job
            await client.list_tools()
            async with contextlib.AsyncExitStack() as stack:
                if url is not None and era == "modern":  # change notifications need a stream
                    await stack.enter_async_context(client.listen(tools_list_changed=True))
                with anyio.move_on_after(await_changed):
                    await changed.wait()
            relisted = len((await client.list_tools()).tools) if changed.is_set() else None
            return {"era": era, "relisted": relisted}
        add = await call(client, "add", {"a": 2, "b": 3}, timeout)
        weather = await call(client, "get_weather", {"city": "Paris"}, timeout)
    return {"era": era, "add": add, "weather": weather}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--era", choices=["modern", "legacy"], required=True)
    parser.add_argument("--timeout", type=float, default=10.0)
    parser.add_argument("--url")
    parser.add_argument(
        "--await-list-changed",
        type=float,
        metavar="S",
        help="after tools/list, wait up to S seconds for notifications/tools/list_changed, "
        "list the tools again when it comes, and report 'relisted' (no tool calls)",
    )
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if (args.url is None) == (not command):
        parser.error("give --url or a server command after --")
    return hold(
        "act_client",
        args.era,
        lambda: converse(args.era, args.timeout, args.url, command, args.await_list_changed),
        DEADLINE_S,
        f"no conversation within {DEADLINE_S:g} s",
    )


if __name__ == "__main__":
    sys.exit(main())
