#!/usr/bin/env python3
"""Benchmark flow filters (``mcpeek.inspector.filters``) over a million flow rows.

    python tests/bench/filter.py [--flows N] [--repeat R]

A plain script, not a test: it prints figures and asserts nothing about
timing. It builds N synthetic :class:`FlowItem` rows cheaply (one Flow per
row, but the messages, attempts and violations are drawn from small shared
pools, so ``~b`` reads text that stays in the CPU cache: its figure is a
lower bound), then, for each filter, times ``filter_rows`` (best of R) and
compares it with a plain Python loop over the same rows that does nothing but
``item.flow.method == "tools/call"``.

Target: ≤ 1 s per million rows for the simple filters (~m, ~s, ~v and their
combinations).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

import msgspec

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent))

from mcpeek.inspector.analysis.flow import Attempt, Entry, Flow
from mcpeek.inspector.filters import compile_filter, filter_rows
from mcpeek.inspector.records import Msg, Violation
from mcpeek.inspector.views.session import FlowItem

FILTERS = [
    "~m tools/call",
    "~s error|unanswered",
    "~v error",
    "~m tools/call & ~v",
    "~m tools/call & !~s ok | ~t >100ms",
    "!(~d s2c | ~p) & ~e modern",
    "weather",
    "~id 42",
    "~b temperature",
    '~b "temp\\w+ \\d"',
]
METHODS = ["tools/call", "tools/list", "resources/read", "prompts/get", "ping"]
NAMES = ["get_weather", "search", "file:///tmp/a.txt", None, "summarise"]
STATUSES = ["complete", "complete", "complete", "error", "unanswered", "input_required"]


def pools(size: int = 64) -> list[list[Attempt]]:
    out = []
    for k in range(size):
        method = METHODS[k % len(METHODS)]
        request = msgspec.json.encode(
            {
                "jsonrpc": "2.0",
                "id": k,
                "method": method,
                "params": {"name": NAMES[k % len(NAMES)], "arguments": {"city": "Paris" * (k % 3)}},
            }
        ).decode()
        response = msgspec.json.encode(
            {
                "jsonrpc": "2.0",
                "id": k,
                "result": {"content": [{"type": "text", "text": f"temperature {k} C " * 4}]},
            }
        ).decode()
        req = Entry(
            k, 0.0, "c2s", "stdio", "request", k, method, Msg(dir="c2s", ch="", raw=request)
        )
        res = Entry(
            k, k * 0.004, "s2c", "stdio", "result", k, None, Msg(dir="s2c", ch="", raw=response)
        )
        out.append([Attempt(request=req, response=res if k % 7 else None)])
    return out


def build(n: int) -> list[FlowItem]:
    attempts = pools()
    finding = [
        Violation(rule=f"rule.{s}", severity=s, msgs=[], message="", spec="")
        for s in ("info", "warning", "error")
    ]
    items = []
    for i in range(n):
        k = i % 64
        flow = Flow(i, "stdio", "s2c" if i % 11 == 0 else "c2s", METHODS[k % len(METHODS)])
        flow.name = NAMES[k % len(NAMES)]
        flow.status = STATUSES[i % len(STATUSES)]
        flow.era = "modern" if i % 3 else "legacy"
        flow.attempts = attempts[k]
        flow.progress_count = i % 5 == 0
        item = FlowItem(flow)
        if i % 13 == 0:
            item.add_finding(finding[i % 3])
        item.marked = i % 101 == 0
        items.append(item)
    return items


def timed(fn: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--flows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    start = time.perf_counter()
    items = build(args.flows)
    print(f"{args.flows:,} synthetic flows built in {time.perf_counter() - start:.2f} s")

    def plain() -> int:
        hits = 0
        for item in items:
            if item.flow.method == "tools/call":
                hits += 1
        return hits

    base = timed(plain, args.repeat)
    print(f"{'plain loop: item.flow.method == tools/call':<42} {base * 1000:8.1f} ms   1.0x")
    for text in FILTERS:
        flt = compile_filter(text)
        rows = filter_rows(flt, items)
        spent = timed(partial(filter_rows, flt, items), args.repeat)
        print(
            f"{text:<42} {spent * 1000:8.1f} ms {spent / base:5.1f}x"
            f"  {len(rows):>9,} rows  {spent / args.flows * 1e9:6.0f} ns/row"
        )


if __name__ == "__main__":
    main()
