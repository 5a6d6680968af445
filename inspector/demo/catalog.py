"""What the demo server declares: its version, identity, tools, and result shapes.

The fixed facts of the "release desk" (:mod:`mcpeek.inspector.demo.server`): the one
protocol version it speaks, the ``serverInfo`` every result carries, the tool
declarations of ``tools/list`` (the ``status`` tool's ``outputSchema`` is the one
its handler breaks on purpose), the error codes it answers with, and the two
helpers that shape a final result. Nothing here holds state or does I/O.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mcpeek.inspector import __version__

VERSION = "2026-07-28"
MCP = "io.modelcontextprotocol/"
SERVER_INFO = {"name": "mcpeek-demo-server", "version": __version__}
RESULT_META = {MCP + "serverInfo": SERVER_INFO}
NOTE_URI = "demo://notes/todo.md"
SEARCH_SECONDS = 20.0  # how long `search` works before it answers (it is meant to be cancelled)
STATE_TTL = 300.0  # seconds a deploy confirmation's requestState stays valid
BUILD_STEPS = ("resolving dependencies", "compiling", "packaging")
BUILD_VERSION = "1.4.2"

# JSON-RPC / MCP error codes
INVALID_PARAMS = -32602
METHOD_NOT_FOUND = -32601
INTERNAL_ERROR = -32603
UNSUPPORTED_VERSION = -32022

Message = dict[str, Any]
Send = Callable[[Message], None]


def _object(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required}


STRING = {"type": "string"}
TOOLS: list[dict[str, Any]] = [
    {
        "name": "build",
        "title": "Build",
        "description": "Build a release artifact of the project, reporting progress.",
        "inputSchema": _object({"target": STRING}, ["target"]),
        "outputSchema": _object(
            {"artifact": STRING, "steps": {"type": "integer"}}, ["artifact", "steps"]
        ),
    },
    {
        "name": "deploy",
        "title": "Deploy",
        "description": "Deploy the last build; asks the user to confirm first.",
        "inputSchema": _object(
            {"env": {"type": "string", "enum": ["staging", "production"]}}, ["env"]
        ),
        "annotations": {"destructiveHint": True, "openWorldHint": False},
    },
    {
        "name": "status",
        "title": "Status",
        "description": "Report the health of a deployment.",
        "inputSchema": _object({"env": STRING}, ["env"]),
        "outputSchema": _object(
            {"env": STRING, "version": STRING, "healthy": {"type": "boolean"}},
            ["env", "version", "healthy"],
        ),
        "annotations": {"readOnlyHint": True},
    },
    {
        "name": "add_note",
        "title": "Add a note",
        "description": f"Append a line to the to-do note ({NOTE_URI}).",
        "inputSchema": _object({"text": STRING}, ["text"]),
    },
    {
        "name": "search",
        "title": "Search",
        "description": "Search every note (slow: it takes a while; cancel it if you must).",
        "inputSchema": _object({"query": STRING}, ["query"]),
        "annotations": {"readOnlyHint": True},
    },
]
CAPABILITIES = {"tools": {}, "resources": {"subscribe": True}}
INSTRUCTIONS = "A toy release desk: build, confirm and deploy, then check its status."


class RequestError(Exception):
    """Answered as a JSON-RPC error."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.data = data


def complete(body: dict[str, Any]) -> dict[str, Any]:
    """A final result: ``resultType`` and the server's identity in ``_meta``."""
    return {**body, "resultType": "complete", "_meta": RESULT_META}


def text_result(text: str, structured: Any = None) -> dict[str, Any]:
    body: dict[str, Any] = {"content": [{"type": "text", "text": text}], "isError": False}
    if structured is not None:
        body["structuredContent"] = structured
    return complete(body)
