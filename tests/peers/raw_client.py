"""A scripted 2026-07-28 stdio MCP client: raw JSON-RPC, no SDK, one fixed conversation.

Usage::

    python tests/peers/raw_client.py -- CMD [ARG...]

Spawns ``CMD`` as a stdio MCP server and sends, one at a time, waiting for
each answer (by id) before the next: ``server/discover``, ``tools/list``,
``tools/call add(2, 3)``, ``tools/call count(3)`` with a ``progressToken``,
``tools/call get_weather("Paris")``.  Every request carries the modern
``_meta`` (protocol version, client info, client capabilities) and ids are
1, 2, 3 ..., so the client side of the wire is conformant and the same on
every run: whatever a linter finds, the server did.  It is the driver of
``bad_server.py``, whose answers it does not judge.

Then it closes the server's stdin, waits for it to exit, and prints ONE JSON
object: ``{"answered": [ids...], "other": N, "exit": CODE}`` (``other`` counts
the lines that were not the awaited answers: notifications, stray responses).
Exit 0 if every request was answered, 1 otherwise (a request unanswered within
10 s, the server gone), 2 on a usage error.
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
    "io.modelcontextprotocol/clientInfo": {"name": "mcpeek-raw-client", "version": "0.1.0"},
    "io.modelcontextprotocol/clientCapabilities": {},
}
CONVERSATION: list[tuple[str, dict[str, Any]]] = [
    ("server/discover", {}),
    ("tools/list", {}),
    ("tools/call", {"name": "add", "arguments": {"a": 2, "b": 3}}),
    ("tools/call", {"name": "count", "arguments": {"n": 3}, "progress": True}),
    ("tools/call", {"name": "get_weather", "arguments": {"city": "Paris"}}),
]


def main(argv: list[str]) -> int:
    command = argv[1:] if argv[:1] == ["--"] else argv
    if not command:
        print("usage: raw_client.py -- CMD [ARG...]", file=sys.stderr)
        return 2
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    lines: queue.Queue[bytes] = queue.Queue()

    def pump(stream: Any) -> None:
        for line in stream:
            lines.put(line)
        lines.put(b"")  # end of the server's stdout

    threading.Thread(target=pump, args=(proc.stdout,), daemon=True).start()
    answered: list[int] = []
    other = 0
    ok = True
    for number, (method, spec) in enumerate(CONVERSATION, start=1):
        meta = {**META, "progressToken": number} if spec.get("progress") else META
        params = {**{k: v for k, v in spec.items() if k != "progress"}, "_meta": meta}
        request = {"jsonrpc": "2.0", "id": number, "method": method, "params": params}
        proc.stdin.write(json.dumps(request, separators=(",", ":")).encode() + b"\n")
        proc.stdin.flush()
        while True:
            try:
                line = lines.get(timeout=TIMEOUT_S)
            except queue.Empty:
                print(f"raw_client: no answer to {method} (id {number})", file=sys.stderr)
                ok = False
                break
            if not line:
                print(f"raw_client: server closed its stdout before id {number}", file=sys.stderr)
                ok = False
                break
            try:
                message = json.loads(line)
            except ValueError:
                other += 1
                continue
            is_answer = isinstance(message, dict) and "method" not in message
            if is_answer and message.get("id") == number:
                answered.append(number)
                break
            other += 1
        if not ok:
            break
    proc.stdin.close()
    try:
        code = proc.wait(timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        code = proc.wait()
    while True:  # count what came after the last answer
        try:
            line = lines.get(timeout=1.0)
        except queue.Empty:
            break
        if not line:
            break
        other += 1
    print(json.dumps({"answered": answered, "other": other, "exit": code}), flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
