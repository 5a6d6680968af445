#!/usr/bin/env python3
"""The live-checks worker's CPU per record in steady state, beside ``lint``'s on the same file.

    python tests/bench/lint_worker.py [--small N] [--large N] [--instructions]

A plain script, not a test: it prints figures and asserts nothing. The worker
(``python -m mcpeek.inspector.cli.live_worker CAPTURE``) follows a capture and
runs the same Analyzer and rules as ``lint``; what it costs beyond lint per
record (following, its wrappers, the JSON lines it sends) is what this shows.
Two captures, each written twice (``--small`` and ``--large`` units), then
the worker (told ``done`` at once: it reads the file to its end, finishes and
exits) and ``lint --format json`` run on each; a figure is

    (cost(large) - cost(small)) / (large - small)

so start-up cancels: CPU seconds (user + system, from the child's rusage) or,
with ``--instructions``, instructions under valgrind's cachegrind (steady on
a busy machine, several times slower). The captures:

* stdio: ``analyze.py``'s benchmark capture (per message);
* http: the exchanges of ``http_relay.py``'s JSON cell, one ``tools/call``
  POST answered with one ``application/json`` result, as mcpeek records them
  (per exchange: three ``http`` records and two messages).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import msgspec

sys.path.insert(0, str(Path(__file__).resolve().parent))
import analyze  # the stdio benchmark capture

ROOT = analyze.ROOT
PYTHON = sys.executable
MCP = "io.modelcontextprotocol/"
VERSION = "2026-07-28"
TOTAL = re.compile(rb"I\s+refs:\s+([\d,]+)")
REQUEST_HEADERS = [
    ["host", "127.0.0.1:40000"],
    ["content-type", "application/json"],
    ["accept", "application/json, text/event-stream"],
    ["mcp-protocol-version", VERSION],
    ["mcp-method", "tools/call"],
    ["mcp-name", "get_weather"],
]
RESPONSE_HEADERS = [["content-type", "application/json"], ["content-length", "210"]]


def write_http(path: Path, exchanges: int) -> int:
    """``exchanges`` tools/call exchanges as mcpeek http records them; returns their number."""
    encoder = msgspec.json.Encoder()
    header = {
        "k": "header",
        "format": "mcpeek-capture",
        "v": 1,
        "created": "2026-11-30T00:00:00.000000Z",
        "transport": "http",
        "target": "http://127.0.0.1:40001/json",
        "tool": "bench",
        "redacted": True,
    }
    t = 1_796_000_000.0
    seq = 0
    with path.open("wb") as f:
        f.write(encoder.encode(header) + b"\n")
        for i in range(1, exchanges + 1):
            x = f"x{i}"
            request = {
                "jsonrpc": "2.0",
                "id": i,
                "method": "tools/call",
                "params": {
                    "name": "get_weather",
                    "arguments": {"city": "Paris"},
                    "_meta": {
                        MCP + "protocolVersion": VERSION,
                        MCP + "clientCapabilities": {},
                        MCP + "clientInfo": {"name": "bench-client", "version": "1.0"},
                        "progressToken": i,
                    },
                },
            }
            result = {
                "jsonrpc": "2.0",
                "id": i,
                "result": {
                    "resultType": "complete",
                    "content": [{"type": "text", "text": "Sunny, 21 C"}],
                    "isError": False,
                    "_meta": {MCP + "serverInfo": {"name": "bench-upstream", "version": "1.0"}},
                },
            }
            records: list[dict[str, object]] = [
                {"k": "http", "x": x, "phase": "request", "method": "POST", "path": "/json"},
                {"k": "msg", "dir": "c2s", "ch": x, "raw": encoder.encode(request).decode()},
                {"k": "http", "x": x, "phase": "response", "status": 200},
                {"k": "msg", "dir": "s2c", "ch": x, "raw": encoder.encode(result).decode()},
                {"k": "http", "x": x, "phase": "end", "reason": "complete"},
            ]
            records[0]["headers"] = REQUEST_HEADERS
            records[2]["headers"] = RESPONSE_HEADERS
            lines = []
            for record in records:
                seq += 1
                t += 0.0002
                lines.append({"k": record.pop("k"), "seq": seq, "t": round(t, 6), **record})
            f.write(encoder.encode_lines(lines))
    return exchanges


def cost(argv: list[str], *, instructions: bool, stdin: bytes = b"") -> float:
    """CPU seconds (or instructions) of one run of ``argv``, output discarded."""
    if instructions:
        valgrind = ["valgrind", "--tool=cachegrind", "--cache-sim=no"]
        argv = [*valgrind, "--cachegrind-out-file=/dev/null", *argv]
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(
            argv,
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
        assert proc.stdin is not None
        proc.stdin.write(stdin)
        proc.stdin.close()  # (after "done": the worker ends as told, not as orphaned)
        usage = os.wait4(proc.pid, 0)[2]
        err.seek(0)
        text = err.read()
    if instructions:
        found = TOTAL.search(text)
        if found is None:
            raise SystemExit(f"lint_worker: no count from valgrind: {text[-300:]!r}")
        return float(found.group(1).replace(b",", b""))
    return usage.ru_utime + usage.ru_stime


def measure(path: Path, *, worker: bool, instructions: bool) -> float:
    if worker:
        argv = [PYTHON, "-m", "mcpeek.inspector.cli.live_worker", str(path)]
        # "done" at once: it follows the file to its end, finishes, and exits.
        return cost(argv, instructions=instructions, stdin=b"done\n")
    argv = [PYTHON, "-m", "mcpeek", "lint", "--format", "json", str(path)]
    return cost(argv, instructions=instructions)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", type=int, default=4_000, help="messages / exchanges")
    parser.add_argument("--large", type=int, default=12_000, help="messages / exchanges")
    parser.add_argument("--instructions", action="store_true", help="count under cachegrind")
    args = parser.parse_args()
    unit = "k instructions" if args.instructions else " us CPU"
    scale = 1e-3 if args.instructions else 1e6
    print(f"load average {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory(prefix="mcpeek-worker-") as tmp:
        for kind, per in (("stdio", "message"), ("http", "exchange")):
            sizes = []
            for n in (args.small, args.large):
                path = Path(tmp) / f"{kind}-{n}.jsonl"
                if kind == "stdio":
                    count = analyze.write_capture(path, n)[0]
                else:
                    count = write_http(path, n)
                sizes.append((path, count))
            (small, n_small), (large, n_large) = sizes
            for who, worker in (("lint", False), ("worker", True)):
                lo = measure(small, worker=worker, instructions=args.instructions)
                hi = measure(large, worker=worker, instructions=args.instructions)
                figure = (hi - lo) / (n_large - n_small) * scale
                print(f"{kind:<6} {who:<7} {figure:8.1f}{unit} per {per}", flush=True)
    print(f"load average {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
