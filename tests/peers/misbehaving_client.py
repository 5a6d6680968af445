"""A stdio MCP client (modern era) that breaks two of the spec's client rules on purpose.

Usage::

    python tests/peers/misbehaving_client.py -- CMD [ARG...]

Spawns ``CMD`` (an MCP server on stdio, e.g. ``mcpeek serve capture.jsonl``)
and, with hand-written JSON-RPC lines:

1. ``server/discover`` (id 1), properly;
2. two ``tools/call add(2, 3)`` written together with the same id 2, the
   first still in flight when the second is sent (``id.reused``);
3. ``tools/call confirm("Proceed?")`` (id 3), which answers
   ``input_required``, then the retry (id 4) with ``inputResponses`` but
   *without* the ``requestState`` the server issued
   (``mrtr.request-state-modified``).

It closes the server's stdin, waits for it to exit, and prints one JSON
line: ``{"answers": {id: result-or-error}, "returncode": N}``. Exit 0 unless
the server could not be run.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "misbehaving-client", "version": "0.1"},
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
}


def message(id: int, method: str, params: dict[str, Any]) -> bytes:
    body = {"jsonrpc": "2.0", "id": id, "method": method, "params": {**params, "_meta": META}}
    return json.dumps(body).encode() + b"\n"


def main(argv: list[str]) -> int:
    command = argv[1:] if argv[:1] == ["--"] else argv
    if not command:
        print("usage: misbehaving_client.py -- CMD [ARG...]", file=sys.stderr)
        return 2
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    answers: dict[str, Any] = {}

    def send(data: bytes) -> None:
        assert proc.stdin is not None
        proc.stdin.write(data)
        proc.stdin.flush()

    def receive(count: int) -> list[dict[str, Any]]:
        got: list[dict[str, Any]] = []
        while len(got) < count:
            assert proc.stdout is not None
            line = proc.stdout.readline()
            if not line:
                raise RuntimeError("the server closed stdout")
            decoded = json.loads(line)
            if "id" in decoded and "method" not in decoded:
                got.append(decoded)
        return got

    def keep(replies: list[dict[str, Any]]) -> None:
        for reply in replies:
            answers.setdefault(str(reply["id"]), []).append(reply.get("result", reply.get("error")))

    send(message(1, "server/discover", {}))
    keep(receive(1))
    add = {"name": "add", "arguments": {"a": 2, "b": 3}}
    send(message(2, "tools/call", add) + message(2, "tools/call", add))  # the same id, twice
    keep(receive(2))
    confirm = {"name": "confirm", "arguments": {"question": "Proceed?"}}
    send(message(3, "tools/call", confirm))
    (first,) = receive(1)
    keep([first])
    keys = list(first.get("result", {}).get("inputRequests", {}))
    responses = {key: {"action": "accept", "content": {"confirm": True}} for key in keys}
    send(message(4, "tools/call", {**confirm, "inputResponses": responses}))  # no requestState
    keep(receive(1))
    proc.stdin.close()
    returncode = proc.wait(timeout=30)
    print(json.dumps({"answers": answers, "returncode": returncode}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
