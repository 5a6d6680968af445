#!/usr/bin/env python3
"""Compare the HTTP relay of mcpeek revisions, paired round by round.

    python tests/bench/http_compare.py [REV ...] [--kind json|sse] [--concurrency N]
                                       [--rounds R] [--requests N] [--mcpeek-arg ARG]...

A plain script, not a test: it prints figures and asserts nothing about
timing. On a small machine one run of a throughput cell swings by 10-30%
from one minute to the next (``http_relay.py`` runs each cell 3 times), so a
change worth a few percent shows only over many rounds measured side by
side. Each round runs the plain TCP relay once, then mcpeek of each
revision, the revisions' order reversed every other round, all in front of
one upstream, in ``http_relay.py``'s cells. Before the first round, each side
runs once uncounted (a series' first run is slower here).

A revision is checked out into a temporary git worktree and run by a Python
of its own: a venv that imports this venv's packages but the worktree's
mcpeek, in the proxy and in its live-checks worker (started with ``-I``,
which ignores the working directory). ``.`` is the working tree as it is, run
by this venv. The default, ``HEAD .``, measures uncommitted changes against
the last commit; one revision twice (``HEAD HEAD``) measures the noise.

Per round: each revision's requests/s as a ratio to the plain relay's, and
the CPU time its mcpeek process and its live-checks worker (at idle
priority) spent per request: the steadier figures. At the end: the medians,
quartiles and every round's ratio. A run whose capture misses a record, or
that exits with an error, ends the comparison (with the rounds so far).
"""

from __future__ import annotations

import argparse
import site
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import http_relay as bench

WORKING_TREE = "."


def git(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "-C", str(bench.ROOT), *args], capture_output=True, text=True)


def checkout(rev: str, folder: Path) -> bench.Checkout:
    """``rev`` checked out in ``folder`` (a new git worktree), with its own Python."""
    if rev == WORKING_TREE:
        return bench.Checkout()
    done = git("worktree", "add", "--detach", "--quiet", str(folder / "src"), rev)
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines() or ["git failed"]
        raise SystemExit(f"http_compare: cannot check out {rev!r}: {lines[-1]}")
    # A venv whose first path is the worktree, then this venv's packages (a path a
    # .pth names gets no .pth of its own read: this venv's editable mcpeek stays out).
    venv = folder / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    packages = next(venv.glob("lib/python*/site-packages"))
    paths = [str(folder / "src"), *site.getsitepackages()]
    (packages / "checkout.pth").write_text("".join(f"{path}\n" for path in paths))
    return bench.Checkout(root=folder / "src", python=str(venv / "bin" / "python"))


def spread(values: list[float], digits: int) -> str:
    if not values:
        return "no reading"
    ordered = sorted(values)
    low, _, high = statistics.quantiles(ordered, n=4) if len(ordered) > 1 else ordered * 3
    return (
        f"median {statistics.median(ordered):.{digits}f} (quartiles {low:.{digits}f}-"
        f"{high:.{digits}f}; all {' '.join(f'{v:.{digits}f}' for v in ordered)})"
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
    # One label per revision given; a revision given twice is told apart by its turn.
    labels = [
        rev if revs.count(rev) == 1 else f"{rev}#{revs[:i].count(rev) + 1}"
        for i, rev in enumerate(revs)
    ]
    ratios: dict[str, list[float]] = {label: [] for label in labels}
    proxy_cpu: dict[str, list[float]] = {label: [] for label in labels}
    worker_cpu: dict[str, list[float]] = {label: [] for label in labels}
    bench.say(
        f"{args.kind} at concurrency {args.concurrency}, {args.requests} requests a run, "
        f"{args.rounds} rounds; mcpeek of {', '.join(labels)} against the plain TCP relay"
    )
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        folders = [Path(tmp) / f"rev{i}" for i in range(len(revs))]
        upstream = None
        try:
            given = zip(labels, revs, folders, strict=True)
            sources = {label: checkout(rev, folder) for label, rev, folder in given}
            upstream = bench.Helper([bench.PYTHON, str(bench.UPSTREAM)])
            work = Path(tmp) / "runs"
            work.mkdir()
            cell = (upstream, args.kind, args.concurrency, args.requests, 200)
            bench.run_cell(*cell, "plain", work, [])
            for label in labels:
                bench.run_cell(*cell, "mcpeek", work, args.mcpeek_arg, source=sources[label])
            for r in range(args.rounds):
                plain = bench.run_cell(*cell, "plain", work, [])
                line = f"round {r + 1}: plain {plain.rate:.0f}/s"
                for label in labels if r % 2 == 0 else labels[::-1]:
                    run = bench.run_cell(
                        *cell, "mcpeek", work, args.mcpeek_arg, source=sources[label]
                    )
                    assert run.capture is not None
                    if run.exit_code != 0 or not run.capture.ok:
                        failure = f"exit {run.exit_code}, {run.capture.describe()}"
                        bench.say(f"{line}; {label}: {failure}")
                        failed = True
                        break
                    ratios[label].append(run.rate / plain.rate)
                    line += f"; {label} {ratios[label][-1]:.2f}x, CPU µs a request"
                    for part, values, cpu in (
                        ("proxy", proxy_cpu, run.proxy_cpu),
                        ("worker", worker_cpu, run.worker_cpu),
                    ):
                        used = run.us(cpu)
                        if used is not None:  # no reading: left out, not counted as 0
                            values[label].append(used)
                        line += f" {part} {'?' if used is None else f'{used:.0f}'}"
                if failed:
                    break
                bench.say(line)
        finally:
            if upstream is not None:
                upstream.stop()
            for rev, folder in zip(revs, folders, strict=True):
                if rev != WORKING_TREE and (folder / "src").exists():
                    done = git("worktree", "remove", "--force", str(folder / "src"))
                    if done.returncode != 0:
                        bench.say(f"http_compare: git worktree remove {folder}: {done.stderr}")
            git("worktree", "prune")  # an entry whose folder is gone (an interrupted add)
    bench.say("of the plain relay's requests/s; CPU µs a request of mcpeek's proxy, its worker:")
    for label in labels:
        pad = " " * len(label)
        bench.say(f"  {label}: {spread(ratios[label], 2)}")
        bench.say(f"  {pad}  proxy {spread(proxy_cpu[label], 0)}")
        bench.say(f"  {pad}  worker {spread(worker_cpu[label], 0)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
