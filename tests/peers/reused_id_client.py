"""A 2026-07-28 stdio MCP client that reuses a request id: raw JSON-RPC, no SDK.

Usage::

    python tests/peers/reused_id_client.py -- CMD [ARG...]

Spawns ``CMD`` as a stdio MCP server, sends ``server/discover`` (id 1) and
waits for its answer, then writes two ``tools/call add(2, 3)`` requests with
the same id 2 in ONE write, so the second is sent while the first is still
in flight: the client rule ``id.reused``. Everything else (the modern
``_meta`` of every request) is conformant. It reads until both are answered
(or 10 s pass), closes the server's stdin, waits for it to exit, and prints
one JSON line ``{"answers": N, "returncode": CODE}``. Exit 0 unless the
server could not be run (1) or the command line is wrong (2).
"""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
from typing import Any

TIMEOUT_S = 10.0
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "reused-id-client", "version": "0.1.0"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


def request(id_: int, method: str, params: dict[str, Any]) -> bytes:
    body = {"jsonrpc": "2.0", "id": id_, "method": method, "params": {**params, "_meta": META}}
    return json.dumps(body, separators=(",", ":")).encode() + b"\n"


def main(argv: list[str]) -> int:
    command = argv[1:] if argv[:1] == ["--"] else argv
    if not command:
        print("usage: reused_id_client.py -- CMD [ARG...]", file=sys.stderr)
        return 2
    try:
        proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    except OSError as exc:
        print(f"reused_id_client: cannot run the server: {exc}", file=sys.stderr)
        return 1
    assert proc.stdin is not None and proc.stdout is not None
    lines: queue.Queue[bytes] = queue.Queue()

    def pump() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put(line)
        lines.put(b"")

    threading.Thread(target=pump, daemon=True).start()

    def answers(wanted: int) -> int:
        got = 0
        while got < wanted:
            try:
                line = lines.get(timeout=TIMEOUT_S)
            except queue.Empty:
                break
            if not line:
                break
            if b'"method"' not in line:  # a response, not a notification
                got += 1
        return got

    proc.stdin.write(request(1, "server/discover", {}))
    proc.stdin.flush()
    answered = answers(1)
    add = request(2, "tools/call", {"name": "add", "arguments": {"a": 2, "b": 3}})
    proc.stdin.write(add + add)  # the same id twice, the first still unanswered
    proc.stdin.flush()
    answered += answers(2)
    proc.stdin.close()
    try:
        code = proc.wait(TIMEOUT_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        code = proc.wait()
    print(json.dumps({"answers": answered, "returncode": code}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
