"""Legacy stdio sessions built record by record, for the surface and diff tests."""

from __future__ import annotations

import json
from typing import Any

from mcpeek.inspector.records import Msg
from mcpeek.inspector.testing.records import RecordBuilder


def tool(name: str, description: str = "", **schema: Any) -> dict[str, Any]:
    properties = {key: {"type": kind} for key, kind in schema.items()}
    return {
        "name": name,
        "description": description or f"the {name} tool",
        "inputSchema": {"type": "object", "properties": properties},
    }


def handshake(
    b: RecordBuilder,
    *,
    version: str = "2025-11-25",
    server_capabilities: dict[str, Any] | None = None,
    client_capabilities: dict[str, Any] | None = None,
    server_version: str = "1.0",
) -> None:
    params = {
        "protocolVersion": version,
        "capabilities": client_capabilities if client_capabilities is not None else {},
        "clientInfo": {"name": "test-client", "version": "1.0"},
    }
    request = b.request("initialize", params)
    result = {
        "protocolVersion": version,
        "capabilities": (
            server_capabilities
            if server_capabilities is not None
            else {"tools": {"listChanged": True}}
        ),
        "serverInfo": {"name": "test-server", "version": server_version},
    }
    b.result(id_of(request), result)
    b.notify("notifications/initialized", dir="c2s")


def list_tools(
    b: RecordBuilder,
    tools: list[dict[str, Any]],
    *,
    cursor: str | None = None,
    next_cursor: str | None = None,
) -> int:
    """A tools/list request and its answer; returns the answer's seq."""
    request = b.request("tools/list", {"cursor": cursor} if cursor else {})
    result: dict[str, Any] = {"tools": tools}
    if next_cursor:
        result["nextCursor"] = next_cursor
    return b.result(id_of(request), result).seq


def call_tool(b: RecordBuilder, name: str, text: str, **arguments: Any) -> None:
    request = b.request("tools/call", {"name": name, "arguments": arguments})
    b.result(id_of(request), {"content": [{"type": "text", "text": text}]})


def id_of(record: Msg) -> int:
    """The JSON-RPC id of a request the builder wrote."""
    return int(json.loads(record.raw or "{}")["id"])
