#!/usr/bin/env python3
"""Benchmark the viewer (``mcpeek view``) on big captures.

    python tests/bench/tui_load.py [--sizes 100000,1000000] [--quick]

A plain script, not a test: it prints figures and asserts nothing about
timing. For each size it writes a realistic modern capture (the generator of
``analyze.py``) and, in a fresh process, runs the real app headless (Textual's
``run_test``, 120x40) and measures:

- time to the first screen: ``mcpeek view FILE`` started in a pseudo-terminal
  (a real process: interpreter start-up and imports included) until its
  output shows flow rows;
- time until fully indexed: every record read and correlated (rules are
  not re-run: ``recheck_rules=False``; the re-check runs in a separate
  ``mcpeek lint`` process afterwards and is timed by ``lint.py``);
- filter latency on the whole capture: ``~m tools/call & ~s error`` and
  ``~b weather`` from pressing enter to the rows being shown;
- peak RSS of the process.

The baseline measured in the same run is a bare read + ``msgspec`` decode of
every message (what any viewer must pay at least); the ratios say how many
times that the indexing costs.

Targets (issue #6): first screen <= 1 s at any size; 1M messages indexed
<= 20 s; a filter over 1M <= 1 s; memory <= 1.5 GB at 1M.
"""

from __future__ import annotations

import argparse
import json
import os
import pty
import select
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import analyze

ROOT = Path(__file__).resolve().parents[2]

CHILD = r"""
import asyncio, json, resource, sys, time
from pathlib import Path
path = Path(sys.argv[1])
t0 = time.perf_counter()
from mcpeek.inspector import gctune
gctune.for_this_process()  # as the mcpeek CLI does for `mcpeek view`
from mcpeek.tui.app import McpeekApp
from mcpeek.tui.flow_list import FlowList

async def main():
    out = {}
    app = McpeekApp([path], follow=False, recheck_rules=False)
    async with app.run_test(size=(120, 40)) as pilot:
        flows = app.query_one(FlowList)
        view = app.views[0]
        while not view.done:
            await asyncio.sleep(0.02)
        out["indexed"] = time.perf_counter() - t0
        out["flows"] = len(view.model.items)
        out["messages"] = view.model.messages
        filters = (("filter_simple", "~m tools/call & ~p"), ("filter_body", "~b weather"))
        for name, text in filters:
            before = view.matches
            started = time.perf_counter()
            app.set_filter(text)
            while view.matches is before:
                await asyncio.sleep(0.002)
            await pilot.pause()
            out[name] = time.perf_counter() - started
            out[name + "_rows"] = len(view.matches)
        app.set_filter("")
    out["peak_kb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps(out))

asyncio.run(main())
"""

BASELINE = r"""
import json, sys, time
import msgspec
from mcpeek.inspector.capture.reader import CaptureReader
from mcpeek.inspector.records import Msg, wire_bytes
start = time.perf_counter()
decode = msgspec.json.decode
n = 0
for record in CaptureReader(sys.argv[1]).records():
    if isinstance(record, Msg):
        decode(wire_bytes(record)); n += 1
print(json.dumps({"n": n, "wall": time.perf_counter() - start}))
"""


def child(code: str, path: Path) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-c", code, str(path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode != 0:
        raise SystemExit(f"benchmark child failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def first_screen(path: Path, timeout: float = 60.0) -> float:
    """Seconds from starting ``mcpeek view`` in a pty until rows are on its screen."""
    controller, terminal = pty.openpty()
    env = {**os.environ, "TERM": "xterm-256color"}
    started = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "mcpeek", "view", "--no-recheck", "--no-follow", str(path)],
        stdin=terminal,
        stdout=terminal,
        stderr=terminal,
        env=env,
        cwd=ROOT,
    )
    os.close(terminal)
    seen = b""
    try:
        while b"tools/list" not in seen:  # the second flow of every bench capture
            if time.perf_counter() - started > timeout:
                raise SystemExit("the viewer never showed its first screen")
            ready, _, _ = select.select([controller], [], [], 0.5)
            if ready:
                seen += os.read(controller, 1 << 16)
        return time.perf_counter() - started
    finally:
        proc.kill()
        proc.wait()
        os.close(controller)


def verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", default="100000,1000000", help="message counts, comma-separated")
    parser.add_argument("--quick", action="store_true", help="100k messages only")
    args = parser.parse_args()
    sizes = [100_000] if args.quick else [int(s) for s in args.sizes.split(",")]
    print(
        f"{'messages':>10}{'first screen':>14}{'indexed s':>11}{'vs read+decode':>16}"
        f"{'filter s':>10}{'~b s':>8}{'peak MB':>9}"
    )
    for size in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "bench.jsonl"
            count, _ = analyze.write_capture(path, size)
            base = child(BASELINE, path)
            shown = first_screen(path)
            r = child(CHILD, path)
            r["first_screen"] = shown
        peak_mb = r["peak_kb"] / 1024
        print(
            f"{count:>10,}{r['first_screen']:>13.2f}s{r['indexed']:>11.2f}"
            f"{r['indexed'] / base['wall']:>15.1f}x{r['filter_simple']:>10.2f}"
            f"{r['filter_body']:>8.2f}{peak_mb:>9.0f}"
        )
        print(
            f"{'':>10}  {r['flows']:,} flows; first screen {verdict(r['first_screen'] <= 1)}; "
            f"indexed {verdict(r['indexed'] <= 20) if count >= 1_000_000 else 'n/a'}"
            " (target: 1M in 20 s); "
            f"filter {verdict(r['filter_simple'] <= 1)} ({r['filter_simple_rows']:,} rows); "
            f"memory {verdict(peak_mb <= 1536 * count / 1_000_000 or peak_mb <= 300)}; "
            f"baseline read+decode {base['wall']:.2f} s"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
