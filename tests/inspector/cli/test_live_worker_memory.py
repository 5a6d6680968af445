"""The live-checks worker's memory on big HTTP messages: issue #16's bound, pinned.

"Peak RSS of the live-checks worker <= 60 MB + 3x the largest single message":
one exchange carrying a 16 MiB request and a 16 MiB result, read by the
worker from a finished capture (as lint would, through the same engine). The
worker runs in a process of its own under a small launcher, so that the peak
measured (``RUSAGE_CHILDREN`` of the launcher) is the worker's alone, not the
largest of every child the test session ever waited for. A memory bound, not a
timing: what it measures does not depend on the machine's load.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from mcpeek.inspector.cli import live
from mcpeek.inspector.testing.records import RecordBuilder

MIB = 1 << 20
BIG = 16 * MIB
HEADERS = [
    ("content-type", "application/json"),
    ("accept", "application/json, text/event-stream"),
    ("mcp-protocol-version", "2026-07-28"),
    ("mcp-method", "tools/call"),
    ("mcp-name", "upload"),
]
# Runs the worker with "done" on its stdin (read the capture to its end) and prints
# the peak RSS of its only child, in KiB.
LAUNCHER = """
import resource, subprocess, sys
done = subprocess.run(sys.argv[1:], input=b"done\\n", capture_output=True)
print(done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
sys.stderr.write(done.stderr.decode(errors="replace"))
"""


def big_exchange(tmp_path: Path, bulk_in: str) -> tuple[Path, int]:
    """A capture with one well-formed modern 16 MiB ``tools/call`` (its bulk in
    ``bulk_in``) answered by one 16 MiB result; and the size of its largest message."""
    b = RecordBuilder("http", modern=True)
    b.http("x1", "request", method="POST", path="/mcp", headers=HEADERS)
    pad = "x" * BIG
    if bulk_in == "arguments":
        params: dict[str, object] = {"name": "upload", "arguments": {"blob": pad}}
        request = b.request("tools/call", params, id=1, ch="x1")
    else:  # (as tests/bench/http_big.py sends it)
        params = {"name": "upload", "arguments": {"blob": "small"}}
        request = b.request("tools/call", params, id=1, ch="x1", meta={"pad": pad})
    b.http("x1", "response", status=200, headers=[("content-type", "application/json")])
    response = b.result(1, {"content": [{"type": "text", "text": pad}]}, ch="x1")
    b.http("x1", "end", reason="complete")
    largest = max(len(request.raw or ""), len(response.raw or ""))
    del pad, params, request, response
    return b.save(tmp_path / f"big-{bulk_in}.jsonl"), largest


@pytest.mark.parametrize("bulk_in", ["arguments", "_meta"])
def test_the_worker_peaks_below_60_mb_plus_3x_the_largest_message(
    tmp_path: Path, bulk_in: str
) -> None:
    capture, largest = big_exchange(tmp_path, bulk_in)
    worker = [sys.executable, "-m", "mcpeek.inspector.cli.live_worker", str(capture)]
    assert live.DONE == b"done\n"  # what the launcher says
    proc = subprocess.run(
        [sys.executable, "-c", LAUNCHER, *worker], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    code, peak_kib = (int(word) for word in proc.stdout.split())
    assert code == 0, proc.stderr
    bound_kib = (60 * MIB + 3 * largest) // 1024
    assert peak_kib <= bound_kib, (
        f"worker peak {peak_kib / 1024:.1f} MiB > {bound_kib / 1024:.1f} MiB "
        f"(60 MiB + 3 x {largest / MIB:.1f} MiB)"
    )
