#!/usr/bin/env python3
"""Benchmark the Analyzer (correlation) on a 1-million-message capture.

    python tests/bench/analyze.py [--messages N] [--quick]

A plain script, not a test: it prints figures and asserts nothing about
timing. It writes a realistic modern capture (tool calls with progress,
tools/list results, MRTR chains, errors, log messages, list_changed
notifications) to a temporary file, then measures, each in a fresh process:

1. the baseline: reading the file and ``msgspec.json.decode`` of every
   message's raw text (what any consumer must pay at least);
2. reading + the Analyzer in streaming use (``Analyzer()``, as the proxy and
   ``lint`` use it), in messages/s, as a ratio against the baseline, and its
   peak RSS (memory must follow what is in flight, not the capture length);
3. ``inspector.load()`` (everything kept, as the TUI does): time and bytes of
   memory per message beyond the message's raw bytes.

Target: ≥ 100k msgs/s on one core for (2); ≤ 1 KB per message for (3).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import msgspec

ROOT = Path(__file__).resolve().parent.parent.parent
MCP = "io.modelcontextprotocol/"
META = {
    MCP + "protocolVersion": "2026-07-28",
    MCP + "clientCapabilities": {"elicitation": {}},
    MCP + "clientInfo": {"name": "bench-client", "version": "1.0"},
}
SERVER_META = {MCP + "serverInfo": {"name": "bench-server", "version": "1.0"}}
TOOLS = [
    {
        "name": f"tool_{i}",
        "description": "does a thing " * 4,
        "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}},
    }
    for i in range(3)
]


def conversation_group(next_id: int) -> tuple[list[tuple[str, dict]], int]:
    """One slice of realistic traffic (16 messages)."""
    i = next_id
    out: list[tuple[str, dict]] = []

    def req(method: str, params: dict, rid: int, **meta: object) -> None:
        out.append(
            (
                "c2s",
                {
                    "jsonrpc": "2.0",
                    "id": rid,
                    "method": method,
                    "params": {**params, "_meta": {**META, **meta}},
                },
            )
        )

    def res(rid: int, result: dict) -> None:
        out.append(
            (
                "s2c",
                {
                    "jsonrpc": "2.0",
                    "id": rid,
                    "result": {"resultType": "complete", **result, "_meta": SERVER_META},
                },
            )
        )

    req("tools/call", {"name": "get_weather", "arguments": {"city": "Paris"}}, i, progressToken=i)
    for p in (1, 2):
        out.append(
            (
                "s2c",
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/progress",
                    "params": {"progressToken": i, "progress": p, "total": 2},
                },
            )
        )
    res(i, {"content": [{"type": "text", "text": "Sunny, 21 C"}], "isError": False})
    req("tools/list", {}, i + 1)
    res(i + 1, {"tools": TOOLS, "ttlMs": 0, "cacheScope": "private"})
    req("tools/call", {"name": "deploy", "arguments": {}}, i + 2)
    out.append(
        (
            "s2c",
            {
                "jsonrpc": "2.0",
                "id": i + 2,
                "result": {
                    "resultType": "input_required",
                    "requestState": f"state-{i}",
                    "inputRequests": {
                        "ok": {
                            "method": "elicitation/create",
                            "params": {
                                "mode": "form",
                                "message": "Sure?",
                                "requestedSchema": {"type": "object"},
                            },
                        }
                    },
                },
            },
        )
    )
    req(
        "tools/call",
        {
            "name": "deploy",
            "arguments": {},
            "requestState": f"state-{i}",
            "inputResponses": {"ok": {"action": "accept"}},
        },
        i + 3,
    )
    res(i + 3, {"content": [{"type": "text", "text": "deployed"}]})
    req("resources/read", {"uri": "file:///missing"}, i + 4, **{MCP + "logLevel": "info"})
    out.append(
        (
            "s2c",
            {
                "jsonrpc": "2.0",
                "method": "notifications/message",
                "params": {"level": "info", "data": "looking"},
            },
        )
    )
    out.append(
        (
            "s2c",
            {
                "jsonrpc": "2.0",
                "id": i + 4,
                "error": {"code": -32602, "message": "Resource not found"},
            },
        )
    )
    out.append(
        ("s2c", {"jsonrpc": "2.0", "method": "notifications/tools/list_changed", "params": {}})
    )
    req("prompts/get", {"name": "greet", "arguments": {"name": "x"}}, i + 5)
    res(i + 5, {"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}]})
    return out, i + 6


def write_capture(path: Path, messages: int) -> tuple[int, int]:
    """Write a capture of about ``messages`` messages; returns (count, raw bytes)."""
    encoder = msgspec.json.Encoder()
    header = {
        "k": "header",
        "format": "mcpeek-capture",
        "v": 1,
        "created": "2026-11-30T00:00:00.000000Z",
        "transport": "stdio",
        "target": ["bench"],
        "tool": "bench",
        "redacted": True,
    }
    seq = count = raw_bytes = 0
    next_id = 1
    t = 1_796_000_000.0
    with path.open("wb") as f:
        f.write(encoder.encode(header) + b"\n")
        while count < messages:
            group, next_id = conversation_group(next_id)
            lines = []
            for direction, message in group:
                seq += 1
                t += 0.0002
                raw = encoder.encode(message).decode()
                raw_bytes += len(raw)
                lines.append(
                    {
                        "k": "msg",
                        "seq": seq,
                        "t": round(t, 6),
                        "dir": direction,
                        "ch": "stdio",
                        "raw": raw,
                    }
                )
            count += len(group)
            f.write(encoder.encode_lines(lines))
    return count, raw_bytes


CHILD = r"""
import json, resource, sys, time
import msgspec
mode, path = sys.argv[1], sys.argv[2]
from mcpeek.inspector.capture.reader import CaptureReader
from mcpeek.inspector.records import Msg, wire_bytes
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start = time.perf_counter(); cpu0 = time.process_time()
n = 0
if mode == "baseline":
    decode = msgspec.json.decode
    for record in CaptureReader(path).records():
        if isinstance(record, Msg):
            decode(wire_bytes(record)); n += 1
elif mode == "stream":
    from mcpeek.inspector.analysis import Analyzer
    from mcpeek.inspector.capture.run import run_capture
    seen = []
    run_capture(CaptureReader(path), Analyzer(), each=lambda r: type(r) is Msg and seen.append(1))
    n = len(seen)
elif mode == "load":
    from mcpeek import inspector
    capture = inspector.load(path)
    n = len(capture.messages)
wall = time.perf_counter() - start; cpu = time.process_time() - cpu0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"n": n, "wall": wall, "cpu": cpu, "base_kb": base, "peak_kb": peak}))
"""


def run_child(mode: str, path: Path) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, mode, str(path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--quick", action="store_true", help="100k messages")
    args = parser.parse_args()
    messages = 100_000 if args.quick else args.messages
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.jsonl"
        count, raw_bytes = write_capture(path, messages)
        size_mb = path.stat().st_size / 1e6
        print(
            f"capture: {count:,} messages, {raw_bytes / 1e6:.1f} MB of raw JSON-RPC, "
            f"file {size_mb:.1f} MB"
        )
        results = {mode: run_child(mode, path) for mode in ("baseline", "stream", "load")}
    rate = {m: r["n"] / r["cpu"] for m, r in results.items()}
    print(f"\n{'run':<10}{'msgs/s (cpu)':>14}{'wall s':>9}{'peak RSS MB':>13}{'vs baseline':>13}")
    for mode, r in results.items():
        print(
            f"{mode:<10}{rate[mode]:>14,.0f}{r['wall']:>9.2f}{r['peak_kb'] / 1024:>13.1f}"
            f"{rate[mode] / rate['baseline']:>12.2f}x"
        )
    load = results["load"]
    per_msg = (load["peak_kb"] - load["base_kb"]) * 1024 / count - raw_bytes / count
    stream_growth = (results["stream"]["peak_kb"] - results["stream"]["base_kb"]) / 1024
    print("\nsummary")
    print(
        f"  Analyzer streaming: {rate['stream']:,.0f} msgs/s on one core "
        f"(target >= 100,000: {'PASS' if rate['stream'] >= 100_000 else 'MISS'}); "
        f"{rate['stream'] / rate['baseline']:.2f}x a bare JSON decode of the same messages"
    )
    print(
        f"  streaming memory growth over the run: {stream_growth:.1f} MB "
        f"(bounded by what is in flight)"
    )
    print(
        f"  load(): {per_msg:,.0f} bytes per message beyond its raw bytes "
        f"(target <= 1024: {'PASS' if per_msg <= 1024 else 'MISS'})"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
