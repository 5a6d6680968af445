"""A raw stdio MCP server (2026-07-28) with one multi round-trip tool, for replay's tests.

Hand-written JSON-RPC lines (no SDK: it starts in a few milliseconds), speaking
only the modern era:

* ``server/discover`` → supported versions and the ``tools`` capability;
* ``tools/list`` → one tool, ``confirm(question)``;
* ``tools/call confirm`` without ``requestState`` → an ``input_required`` result
  asking for an ``elicitation/create`` (key ``ask``) with a fresh random
  ``requestState`` that only this process knows; called again with one of the
  states it issued and ``inputResponses.ask.action == "accept"`` →
  ``"confirmed: <question>"``; a state it never issued → JSON-RPC error -32602.
  So a replay passes only if it sends the state the *live* server issued.

``--no-input``: the changed server: ``confirm`` answers at once, without asking.

Run:  python tests/peers/mrtr_server.py [--no-input]
"""

from __future__ import annotations

import argparse
import json
import secrets
import sys
from typing import Any

VERSION = "2026-07-28"
META = {"io.modelcontextprotocol/serverInfo": {"name": "mcpeek-mrtr-server", "version": "0.1.0"}}
CACHE = {"ttlMs": 0, "cacheScope": "private"}
TOOL = {
    "name": "confirm",
    "description": "Ask the client a yes/no question, then report the answer.",
    "inputSchema": {
        "type": "object",
        "properties": {"question": {"type": "string"}},
        "required": ["question"],
    },
}
ASK = {
    "method": "elicitation/create",
    "params": {
        "mode": "form",
        "message": "Proceed?",
        "requestedSchema": {
            "type": "object",
            "properties": {"confirm": {"type": "boolean"}},
            "required": ["confirm"],
        },
    },
}


def complete(body: dict[str, Any]) -> dict[str, Any]:
    return {**body, "resultType": "complete", "_meta": META}


def text(value: str) -> dict[str, Any]:
    return complete({"content": [{"type": "text", "text": value}], "isError": False})


def handle(request: dict[str, Any], issued: set[str], no_input: bool) -> dict[str, Any]:
    method, params = request.get("method"), request.get("params") or {}
    if method == "server/discover":
        return complete({"supportedVersions": [VERSION], "capabilities": {"tools": {}}, **CACHE})
    if method == "tools/list":
        return complete({"tools": [TOOL], **CACHE})
    if method == "tools/call" and params.get("name") == "confirm":
        question = str((params.get("arguments") or {}).get("question", ""))
        if no_input:
            return text(f"confirmed: {question}")
        state = params.get("requestState")
        if state is None:
            state = f"st-{secrets.token_hex(8)}"
            issued.add(state)
            return {
                "resultType": "input_required",
                "inputRequests": {"ask": ASK},
                "requestState": state,
                "_meta": META,
            }
        if state not in issued:
            raise ValueError("requestState was not issued by this server")
        answer = (params.get("inputResponses") or {}).get("ask") or {}
        verdict = "confirmed" if answer.get("action") == "accept" else "refused"
        return text(f"{verdict}: {question}")
    raise LookupError(f"unknown method or tool: {method}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-input", action="store_true", help="confirm without asking")
    args = parser.parse_args()
    issued: set[str] = set()
    print("mrtr_server: ready", file=sys.stderr, flush=True)
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        if "id" not in request or "method" not in request:
            continue  # notifications and answers: nothing to say
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": request["id"]}
        try:
            reply["result"] = handle(request, issued, args.no_input)
        except ValueError as exc:
            reply["error"] = {"code": -32602, "message": str(exc)}
        except LookupError as exc:
            reply["error"] = {"code": -32601, "message": str(exc)}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
