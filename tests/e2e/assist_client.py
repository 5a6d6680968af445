"""The official SDK's client, pointed at ``mcpeek mcp``: connecting in an era, and
calling every tool the way an assistant would (helpers for tests/e2e/test_assist.py)."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import mcp_types as types
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError
from mcp_types.version import LATEST_HANDSHAKE_VERSION, LATEST_MODERN_VERSION

from tests.conftest import mcpeek_argv

MODES = {"modern": LATEST_MODERN_VERSION, "legacy": "legacy"}
VERSIONS = {"modern": LATEST_MODERN_VERSION, "legacy": LATEST_HANDSHAKE_VERSION}
TOOLS = {
    "list_captures",
    "list_flows",
    "get_flow",
    "lint",
    "diff_captures",
    "explain_rule",
    "replay_flow",
}
DEADLINE = 60.0
LINT_KEYS = ("file", "rule", "severity", "message", "msgs", "spec")


@asynccontextmanager
async def connected(server: list[str] | str, era: str) -> AsyncIterator[Client]:
    """A client of ``server`` (a stdio command line, or a Streamable HTTP URL), in ``era``
    (pinned: the modern era opens with ``server/discover``, the legacy one with
    ``initialize``)."""
    target: Any = server
    if isinstance(server, list):
        target = StdioServerParameters(command=server[0], args=server[1:], env=dict(os.environ))
    info = types.Implementation(name="mcpeek-assist-test", version="0.1.0")
    async with Client(
        target, mode=MODES[era], client_info=info, cache=None, read_timeout_seconds=DEADLINE
    ) as client:
        if era == "modern":
            raw = await client.session.send_discover(LATEST_MODERN_VERSION)
            client.session.adopt(types.DiscoverResult.model_validate(raw))
        assert client.protocol_version == VERSIONS[era]
        yield client


async def structured(client: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    """A tool's structured result, which must also be its text content (as JSON)."""
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content
    assert isinstance(result.structured_content, dict)
    (text,) = result.content  # for a client that reads no structured content
    assert isinstance(text, types.TextContent)
    assert json.loads(text.text) == result.structured_content
    return result.structured_content


async def refused(client: Client, tool: str, **arguments: Any) -> str:
    """The error text of a call that must fail as MCP errors fail: an ``isError``
    result or a JSON-RPC error, never a dead server."""
    try:
        result = await client.call_tool(tool, arguments)
    except MCPError as exc:
        return str(exc)
    assert result.is_error, result.structured_content
    return " ".join(b.text for b in result.content if isinstance(b, types.TextContent))


def cli_json(*argv: str) -> list[dict[str, Any]]:
    """``mcpeek ARGV`` run as a user runs it, its JSON lines."""
    done = subprocess.run(mcpeek_argv(*argv), capture_output=True, text=True, timeout=60)
    assert done.returncode in (0, 1), done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


async def matches_the_cli(client: Client, capture: Path) -> dict[str, Any]:
    """Every reading tool on ``capture``, each answer compared with ``show --format json``
    and ``lint --format json`` of the same file; returns list_flows' answer."""
    path = str(capture.resolve())
    page = await structured(client, "list_flows", capture=path, limit=1000)
    # show ends with one line per conversation (its surface): the flows are the rest
    shown = [v for v in cli_json("show", "--format", "json", path) if "flow" in v]
    assert page["total"] == len(shown) == len(page["flows"])
    rows = {row["flow"]: row for row in page["flows"]}
    for line in shown:
        assert {k: rows[line["flow"]][k] for k in line} == line
    linted = cli_json("lint", "--format", "json", path)
    assert (await structured(client, "lint", capture=path))["violations"] == linted
    errors = await structured(client, "lint", capture=path, min_severity="error")
    assert errors["violations"] == [v for v in linted if v["severity"] == "error"]
    for row in page["flows"][:3] + [r for r in page["flows"] if r["violations"]][:2]:
        detail = await structured(client, "get_flow", capture=path, flow=row["flow"])
        assert detail["flow"] == row
        assert [m["seq"] for m in detail["messages"]] == row["msgs"]
        mine = [v for v in linted if v["msgs"] and v["msgs"][-1] in row["msgs"]]
        assert [{k: v[k] for k in LINT_KEYS} for v in detail["violations"]] == mine
        for violation in detail["violations"]:
            explained = await structured(client, "explain_rule", rule_id=violation["rule"])
            assert explained["spec"] == violation["spec"]
            assert explained["explanation"] == violation["explanation"]
    return page
