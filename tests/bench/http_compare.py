#!/usr/bin/env python3
"""Compare the HTTP relay of mcpeek revisions, paired round by round.

    python tests/bench/http_compare.py [REV ...] [--kind json|sse] [--concurrency N]
                                       [--rounds R] [--requests N] [--mcpeek-arg ARG]...

A plain script, not a test: it prints figures and asserts nothing about
timing. On a small machine one run of a throughput cell swings by 10-30%
from one minute to the next (``http_relay.py`` runs each cell 3 times), so a
change worth a few percent shows only over many rounds measured side by
side. Each round runs the plain TCP relay once, then mcpeek from each
revision, the revisions' order reversed every other round, all in front of
one upstream, in ``http_relay.py``'s cells. A revision is checked out into a
temporary git worktree and run with this Python (``python -m mcpeek``
imports the checkout it runs in); ``.`` is the working tree as it is. The
default, ``HEAD .``, measures uncommitted changes against the last commit;
one revision twice (``HEAD HEAD``) measures the noise.

Per round: each revision's requests/s as a ratio to the plain relay's, and
the CPU time its mcpeek process and its live-checks worker (at idle priority)
spent per request: the steadier figures. At the end: the medians, quartiles and every round's ratio.
A run whose capture misses a record is reported, and the comparison stops.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import http_relay as bench

WORKING_TREE = "."


def checkout(rev: str, folder: Path) -> Path:
    """A checkout of ``rev`` in ``folder`` (a new git worktree), or the working tree."""
    if rev == WORKING_TREE:
        return bench.ROOT
    done = subprocess.run(
        ["git", "-C", str(bench.ROOT), "worktree", "add", "--detach", "--quiet", str(folder), rev],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines() or ["git failed"]
        raise SystemExit(f"http_compare: cannot check out {rev!r}: {lines[-1]}")
    return folder


def remove(folder: Path) -> None:
    subprocess.run(
        ["git", "-C", str(bench.ROOT), "worktree", "remove", "--force", str(folder)],
        capture_output=True,
    )


def spread(values: list[float], digits: int) -> str:
    ordered = sorted(values)
    k = len(ordered)
    median = statistics.median(ordered)
    return (
        f"median {median:.{digits}f} (quartiles {ordered[k // 4]:.{digits}f}-"
        f"{ordered[(3 * k) // 4]:.{digits}f}; all {' '.join(f'{v:.{digits}f}' for v in ordered)})"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("revs", nargs="*", metavar="REV", help="git revisions; '.': the work tree")
    parser.add_argument("--kind", choices=["json", "sse"], default="json")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--requests", type=int, default=4000, help="requests per run")
    parser.add_argument("--mcpeek-arg", action="append", default=[], metavar="ARG")
    args = parser.parse_args()
    revs: list[str] = args.revs or ["HEAD", WORKING_TREE]
    if args.rounds < 1 or args.requests < 1 or args.concurrency < 1:
        parser.error("--rounds, --requests and --concurrency take a number of 1 or more")
    # One label per revision given, a revision given twice told apart.
    labels = [rev if revs[:i].count(rev) == 0 else f"{rev}({i + 1})" for i, rev in enumerate(revs)]
    ratios: dict[str, list[float]] = {label: [] for label in labels}
    proxy_cpu: dict[str, list[float]] = {label: [] for label in labels}
    worker_cpu: dict[str, list[float]] = {label: [] for label in labels}
    bench.say(
        f"{args.kind} at concurrency {args.concurrency}, {args.requests} requests a run, "
        f"{args.rounds} rounds; mcpeek of {', '.join(labels)} against the plain TCP relay"
    )
    with tempfile.TemporaryDirectory() as tmp:
        folders = [Path(tmp) / f"rev{i}" for i in range(len(revs))]
        roots: dict[str, Path] = {}
        upstream = None
        try:
            for label, rev, folder in zip(labels, revs, folders, strict=True):
                roots[label] = checkout(rev, folder)
            upstream = bench.Helper([bench.PYTHON, str(bench.UPSTREAM)])
            work = Path(tmp) / "runs"
            work.mkdir()
            cell = (upstream, args.kind, args.concurrency, args.requests, 200)
            # Not counted: the first run of a series is slower here, whatever the side
            # (the plain relay's first round came 10-20% under its later ones).
            bench.run_cell(*cell, "plain", work, [])
            for r in range(args.rounds):
                plain = bench.run_cell(*cell, "plain", work, [])
                line = f"round {r + 1}: plain {plain.rate:.0f}/s"
                for label in labels if r % 2 == 0 else labels[::-1]:
                    run = bench.run_cell(*cell, "mcpeek", work, args.mcpeek_arg, root=roots[label])
                    assert run.capture is not None
                    if run.exit_code != 0 or not run.capture.ok:
                        failed = f"exit {run.exit_code}, {run.capture.describe()}"
                        bench.say(f"{line}; {label}: {failed}")
                        return 1
                    ratios[label].append(run.rate / plain.rate)
                    proxy_cpu[label].append(run.us(run.proxy_cpu) or 0.0)
                    worker_cpu[label].append(run.us(run.worker_cpu) or 0.0)
                    line += (
                        f"; {label} {ratios[label][-1]:.2f}x, CPU µs a request "
                        f"{proxy_cpu[label][-1]:.0f} + {worker_cpu[label][-1]:.0f}"
                    )
                bench.say(line)
        finally:
            if upstream is not None:
                upstream.stop()
            for rev, folder in zip(revs, folders, strict=True):
                if rev != WORKING_TREE and folder.exists():
                    remove(folder)
    bench.say("of the plain relay's requests/s; CPU µs a request of mcpeek's proxy, its worker:")
    for label in labels:
        pad = " " * len(label)
        bench.say(f"  {label}: {spread(ratios[label], 2)}")
        bench.say(f"  {pad}  proxy {spread(proxy_cpu[label], 0)}")
        bench.say(f"  {pad}  worker {spread(worker_cpu[label], 0)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
