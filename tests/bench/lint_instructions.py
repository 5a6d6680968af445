#!/usr/bin/env python3
"""Instructions per message of ``mcpeek lint``, with every rule and with none (its floor).

    python tests/bench/lint_instructions.py [--small N] [--large N] [--profile DIR] [--floor K]

A plain script, not a test: it prints figures and asserts nothing. Wall-clock
figures swing with whatever else the machine runs; an instruction count does
not. It writes ``analyze.py``'s benchmark capture twice (``--small`` and
``--large`` messages), runs ``python -m mcpeek lint --format json`` on each
under valgrind's cachegrind (``--cache-sim=no``: instructions only), with
every rule and with every rule ignored, and prints

    (instructions(large) - instructions(small)) / (large - small)

per message for both: the start-up (imports, building the rules and their
decoders) is in both counts and cancels. The ratio floor / all rules is what
issue #14's target is stated in (>= 0.4).

``--http CAPTURE`` measures per HTTP exchange instead, on an HTTP capture (one
``tests/bench/http_relay.py --keep DIR`` kept, say): the small capture is its
first half of exchanges, the large one all of it.

``--misses`` also simulates the caches and the branch predictor (slower) and prints
the I1 and D1 misses and the mispredicts per message: lint's CPU-time ratio sits
well below its instruction ratio because the rules' code misses far more per
instruction than the floor's.

``--profile DIR`` keeps the cachegrind output files of the large runs there
(read them with ``cg_annotate``; Python's own frames show as the
interpreter's C functions, so it says where in C, not in which rule).
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from mcpeek import rules

sys.path.insert(0, str(Path(__file__).resolve().parent))
import analyze  # the benchmark capture

ROOT = analyze.ROOT
PYTHON = sys.executable
#: What cachegrind prints of each counter (the misses only with --misses).
COUNTERS = {
    "instructions": re.compile(rb"I\s+refs:\s+([\d,]+)"),
    "I1 misses": re.compile(rb"I1\s+misses:\s+([\d,]+)"),
    "D1 misses": re.compile(rb"D1\s+misses:\s+([\d,]+)"),
    "mispredicts": re.compile(rb"Mispredicts:\s+([\d,]+)"),
}


def instructions(
    capture: Path, *, no_rules: bool, keep: Path | None, misses: bool = False
) -> dict[str, int]:
    """What cachegrind counts for one lint of ``capture``: its instructions and, with
    ``misses``, its simulated cache misses and branch mispredicts."""
    ignored = [a for rule in rules.catalog() for a in ("--ignore", rule)] if no_rules else []
    with tempfile.TemporaryDirectory(prefix="mcpeek-cg-") as tmp:
        out = keep or Path(tmp) / "cachegrind.out"
        argv = [
            "valgrind",
            "--tool=cachegrind",
            *(["--cache-sim=yes", "--branch-sim=yes"] if misses else ["--cache-sim=no"]),
            f"--cachegrind-out-file={out}",
            PYTHON,
            "-m",
            "mcpeek",
            "lint",
            "--format",
            "json",
            *ignored,
            str(capture),
        ]
        done = subprocess.run(argv, cwd=ROOT, capture_output=True, check=False)
    counts = {}
    for name, pattern in COUNTERS.items():
        found = pattern.search(done.stderr)
        if found is not None:
            counts[name] = int(found.group(1).replace(b",", b""))
    if "instructions" not in counts:
        raise SystemExit(f"lint_instructions: no count from valgrind: {done.stderr[-400:]!r}")
    return counts


def http_part(capture: Path, out: Path, *, half: bool) -> int:
    """Write ``capture`` (or its first half of exchanges) to ``out``; its exchanges."""
    lines = capture.read_bytes().splitlines(keepends=True)
    starts = [i for i, line in enumerate(lines) if b'"phase":"request"' in line]
    if half:
        starts = starts[: len(starts) // 2]
        lines = lines[: starts[-1]] if starts else lines
        starts = starts[:-1]
    out.write_bytes(b"".join(lines))
    return len(starts)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", type=int, default=8_000)
    parser.add_argument("--large", type=int, default=16_000)
    parser.add_argument("--profile", type=Path, help="keep the large runs' cachegrind files here")
    parser.add_argument(
        "--floor",
        type=float,
        metavar="K",
        help="take the floor as K thousand instructions per message (from an earlier run) "
        "instead of measuring it again: half the time, when only the rules changed",
    )
    parser.add_argument("--http", type=Path, help="an HTTP capture: per exchange, not message")
    parser.add_argument(
        "--misses",
        action="store_true",
        help="also simulate the caches and branches (slower): lint's CPU time ratio sits "
        "well below its instruction ratio, and these say why",
    )
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        print("lint_instructions: valgrind is not installed", file=sys.stderr)
        return 2
    if args.profile is not None:
        args.profile.mkdir(parents=True, exist_ok=True)
    per_message: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="mcpeek-cg-") as tmp:
        sizes = {}
        for name, wanted in (("small", args.small), ("large", args.large)):
            path = Path(tmp) / f"{name}.jsonl"
            if args.http is not None:
                sizes[name] = (path, http_part(args.http, path, half=name == "small"))
            else:
                sizes[name] = (path, analyze.write_capture(path, wanted)[0])
        (small, n_small), (large, n_large) = sizes["small"], sizes["large"]
        # A first run compiles whatever changed since the last one (its .pyc), which
        # would count in the first measured run only: not counted.
        subprocess.run([PYTHON, "-m", "mcpeek", "lint", str(small)], cwd=ROOT, capture_output=True)
        if args.floor is not None:
            per_message["floor"] = args.floor * 1000
        for label, no_rules in (("floor", True), ("all rules", False)):
            if label in per_message:
                continue
            keep = None
            if args.profile is not None:
                keep = args.profile / ("floor.out" if no_rules else "rules.out")
            lo = instructions(small, no_rules=no_rules, keep=None, misses=args.misses)
            hi = instructions(large, no_rules=no_rules, keep=keep, misses=args.misses)
            each = {name: (hi[name] - lo[name]) / (n_large - n_small) for name in hi}
            per_message[label] = each.pop("instructions")
            unit = "exchange" if args.http is not None else "message"
            extra = "".join(f", {value:,.0f} {name}" for name, value in each.items())
            print(
                f"{label:<10} {per_message[label] / 1000:8.1f}k instructions/{unit}{extra}",
                flush=True,
            )
    ratio = per_message["floor"] / per_message["all rules"]
    print(f"ratio      {ratio:8.3f}x  (floor / all rules; issue #14's target: >= 0.4)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
