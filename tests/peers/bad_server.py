"""A misbehaving 2026-07-28 stdio MCP server: raw JSON-RPC, no SDK, deliberate spec violations.

It answers a modern client (``raw_client.py``, or any client that sends
``server/discover``, ``tools/list`` and ``tools/call`` for ``add``, ``count``
and ``get_weather``) and breaks a few rules of the catalog (docs/rules.md) along the
way, each once and always at the same point of the conversation:

=========================  =======================================================
``tools/call add``         ``structuredContent`` ``{"result": "5"}`` although the
                           declared ``outputSchema`` says ``result`` is an integer
                           (``tools.output-schema``)
``tools/call count``       progress 1, 2, 2: the last value does not increase
                           (``progress.not-increasing``)
``tools/call get_weather`` the result has no ``resultType``
                           (``result.result-type-missing``); before it, a
                           ``notifications/tools/list_changed`` sent with an
                           ``id`` (``notification.with-id``) and a response to
                           id 99, which the client never sent
                           (``response.unknown-id``)
=========================  =======================================================

Everything else (``server/discover``, ``tools/list``, the ``_meta`` of every
result, the cache fields) is conformant, so a linter should find exactly those
violations.  Other methods get a conformant -32601 error.  One line
``bad_server: ready`` goes to stderr; the server exits 0 at the end of stdin.

Run:  python tests/peers/bad_server.py
"""

from __future__ import annotations

import json
import sys
from typing import Any

VERSION = "2026-07-28"
SERVER_INFO = {"name": "mcpeek-bad-server", "version": "0.1.0"}
META = {"io.modelcontextprotocol/serverInfo": SERVER_INFO}


def _tool(name: str, description: str, arguments: dict[str, str], result: str) -> dict[str, Any]:
    return {
        "name": name,
        "description": description,
        "inputSchema": {
            "type": "object",
            "properties": {arg: {"type": kind} for arg, kind in arguments.items()},
            "required": list(arguments),
        },
        "outputSchema": {
            "type": "object",
            "properties": {"result": {"type": result}},
            "required": ["result"],
        },
    }


TOOLS = [
    _tool("add", "Add two integers.", {"a": "integer", "b": "integer"}, "integer"),
    _tool("count", "Report progress n times.", {"n": "integer"}, "string"),
    _tool("get_weather", "A (fake) weather report.", {"city": "string"}, "string"),
]


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def result(id_: Any, body: dict[str, Any], *, result_type: bool = True) -> None:
    if result_type:
        body = {**body, "resultType": "complete"}
    send({"jsonrpc": "2.0", "id": id_, "result": {**body, "_meta": META}})


def text_result(id_: Any, text: str, structured: Any, *, result_type: bool = True) -> None:
    body = {"content": [{"type": "text", "text": text}], "structuredContent": structured}
    result(id_, {**body, "isError": False}, result_type=result_type)


def call_tool(id_: Any, params: dict[str, Any]) -> None:
    name = params.get("name")
    arguments = params.get("arguments") or {}
    if name == "add":
        total = int(arguments.get("a", 0)) + int(arguments.get("b", 0))
        # VIOLATION tools.output-schema: "result" is declared an integer
        text_result(id_, str(total), {"result": str(total)})
    elif name == "count":
        n = int(arguments.get("n", 3))
        token = (params.get("_meta") or {}).get("progressToken")
        if token is not None:
            for step in [*range(1, n), n - 1]:  # VIOLATION progress.not-increasing: the last
                send(
                    {
                        "jsonrpc": "2.0",
                        "method": "notifications/progress",
                        "params": {"progressToken": token, "progress": step, "total": n},
                    }
                )
        text_result(id_, f"counted {n}", {"result": f"counted {n}"})
    elif name == "get_weather":
        # VIOLATION notification.with-id: a notification MUST NOT carry an id
        send({"jsonrpc": "2.0", "id": "n1", "method": "notifications/tools/list_changed"})
        # VIOLATION response.unknown-id: the client never sent a request with id 99
        result(99, {"content": [{"type": "text", "text": "a stray answer"}], "isError": False})
        city = str(arguments.get("city", "nowhere"))
        # VIOLATION result.result-type-missing: no resultType in a modern result
        text_result(id_, f"Sunny in {city}", {"result": f"Sunny in {city}"}, result_type=False)
    else:
        send(
            {
                "jsonrpc": "2.0",
                "id": id_,
                "error": {"code": -32602, "message": f"Unknown tool: {name}"},
            }
        )


def handle(message: Any) -> None:
    if not isinstance(message, dict) or "id" not in message or "method" not in message:
        return  # notifications and responses need no answer
    id_, method = message["id"], message["method"]
    params = message.get("params") or {}
    if method == "server/discover":
        result(
            id_,
            {
                "supportedVersions": [VERSION],
                "capabilities": {"tools": {}},
                "ttlMs": 0,
                "cacheScope": "private",
            },
        )
    elif method == "tools/list":
        result(id_, {"tools": TOOLS, "ttlMs": 0, "cacheScope": "private"})
    elif method == "tools/call":
        call_tool(id_, params)
    else:
        error = {"code": -32601, "message": f"Method not found: {method}"}
        send({"jsonrpc": "2.0", "id": id_, "error": error})


def main() -> int:
    print("bad_server: ready", file=sys.stderr, flush=True)
    for line in sys.stdin:
        if line.strip():
            try:
                handle(json.loads(line))
            except ValueError:
                continue
    return 0


if __name__ == "__main__":
    sys.exit(main())
