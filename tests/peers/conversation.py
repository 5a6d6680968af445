"""The conversation both SDK test clients hold, whatever the transport.

``sdk_client.py`` (stdio) and ``sdk_http_client.py`` (Streamable HTTP) open a
``mcp.Client`` their own way and then run :func:`common_calls`: the era's
opening (a ``server/discover`` probe for the pinned modern era), a check of
the negotiated version, tools/list, add(2, 3), count(3) with progress and
get_weather("Paris"). The result is the part of the printed JSON they share.
:func:`hold` is how every client runs its conversation and reports it.

With ``MCPEEK_TEST_TRACEPARENT`` set (a W3C ``traceparent``), the conversation
runs inside that caller's trace context, as an agent's would: the SDK then puts
the ``traceparent`` in each request's ``_meta`` (the export tests follow it).
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import mcp_types as types
from mcp import Client
from mcp_types.version import LATEST_HANDSHAKE_VERSION, LATEST_MODERN_VERSION

MODES = {"modern": LATEST_MODERN_VERSION, "legacy": "legacy", "auto": "auto"}
EXPECTED_VERSION = {"modern": LATEST_MODERN_VERSION, "legacy": LATEST_HANDSHAKE_VERSION}


def text(result: types.CallToolResult) -> str:
    return "".join(block.text for block in result.content if isinstance(block, types.TextContent))


def checked(name: str, result: types.CallToolResult) -> types.CallToolResult:
    if result.is_error:
        raise RuntimeError(f"tools/call {name} returned isError: {text(result)!r}")
    return result


async def common_calls(
    client: Client, era: str, discover: bool, on_progress: Any
) -> dict[str, Any]:
    if era == "modern" and discover:
        raw = await client.session.send_discover(LATEST_MODERN_VERSION)
        client.session.adopt(types.DiscoverResult.model_validate(raw))
    version = client.protocol_version
    if era in EXPECTED_VERSION and version != EXPECTED_VERSION[era]:
        raise RuntimeError(f"era {era}: negotiated {version!r}, expected {EXPECTED_VERSION[era]!r}")
    tools = await client.list_tools()
    added = checked("add", await client.call_tool("add", {"a": 2, "b": 3}))
    checked("count", await client.call_tool("count", {"n": 3}, progress_callback=on_progress))
    weather = checked("get_weather", await client.call_tool("get_weather", {"city": "Paris"}))
    structured = added.structured_content
    add_value: Any = (
        structured.get("result", structured) if isinstance(structured, dict) else text(added)
    )
    return {
        "era": era,
        "protocol_version": version,
        "tools": [tool.name for tool in tools.tools],
        "add": add_value,
        "weather": text(weather),
    }


def hold(
    name: str,
    era: str,
    conversation: Callable[[], Awaitable[dict[str, Any]]],
    deadline: float,
    timeout_message: str,
) -> int:
    """Run ``conversation`` within ``deadline`` seconds and print its report as one
    JSON line (exit 0); any failure: the error and a traceback on stderr (exit 1)."""

    async def run() -> dict[str, Any]:
        caller = os.environ.get("MCPEEK_TEST_TRACEPARENT")
        if caller:
            from opentelemetry import context, propagate

            context.attach(propagate.extract({"traceparent": caller}))
        try:
            with anyio.fail_after(deadline):
                return await conversation()
        except TimeoutError:
            raise TimeoutError(timeout_message) from None

    try:
        report = anyio.run(run)
    except BaseException as exc:  # any failure, incl. ExceptionGroup -> exit 1
        if isinstance(exc, KeyboardInterrupt):
            raise
        print(f"{name}: {era} conversation failed: {exc!r}", file=sys.stderr)
        traceback.print_exc(file=sys.stderr)
        return 1
    print(json.dumps(report), flush=True)
    return 0
