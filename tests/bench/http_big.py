#!/usr/bin/env python3
"""Big messages and long streams through the mcpeek HTTP proxy, against direct and a bare relay.

    python tests/bench/http_big.py [--size MB] [--stream N] [--rounds R] [--quick] [--keep DIR]

A plain script, not a test: it prints figures and asserts nothing about
timing. Three exchanges, each measured direct, through ``http_bare_proxy.py``
and through ``python -m mcpeek http`` (a fresh one per run, live checks on),
in alternating rounds (direct, bare, mcpeek, direct, ...), medians printed:

* ``json``: one JSON-RPC request of SIZE MB POSTed, answered by a JSON
  result of the same size (one big body each way);
* ``sse``: a small request answered by one SSE event of SIZE MB;
* ``stream``: a small request answered by N small SSE events (progress
  notifications) then the result: a long stream of small messages, where
  mcpeek's RSS must not grow (its RSS is sampled through the stream).

For mcpeek: its CPU time for the run (a figure that a busy machine disturbs
less than wall time), the peak RSS (VmHWM) of the proxy and of its live-checks worker,
reported apart, and its capture checked (every message recorded, every
exchange complete). ``--profile`` adds one mcpeek run per kind under cProfile
(CPU time, not counted in the figures) and prints where its time goes.
``--keep DIR`` keeps mcpeek's last capture of each kind there (``json.jsonl``...),
to run the worker or lint on again.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import aiohttp
from http_relay import (
    BARE_PROXY,
    HEADERS,
    PYTHON,
    UPSTREAM,
    Helper,
    Mcpeek,
    check_capture,
    print_profile,
    request_body,
    say,
)
from procstat import proc_cpu

POLL = 0.05
SETTLE_TIMEOUT = 15.0  # seconds the live-checks worker may take to start and go idle


def settle(mcpeek: Mcpeek) -> float:
    """Wait until mcpeek and its live-checks worker are idle (their CPU time still
    for 0.2 s): a run measured while the worker imports the rules measures its
    start-up, not the relay. Returns the seconds waited."""
    t0 = time.monotonic()
    last: tuple[float | None, float | None] = (None, None)
    still = 0
    while time.monotonic() - t0 < SETTLE_TIMEOUT and still < 4:
        mcpeek.sample()
        now = (proc_cpu(mcpeek.pid), proc_cpu(mcpeek.worker_pid))
        still = still + 1 if now == last else 0
        last = now
        time.sleep(POLL)
    return time.monotonic() - t0


async def exchange(origin: str, kind: str, size: int, n: int, sampler: Mcpeek | None) -> float:
    """Seconds for the measured exchange (after one small warm-up exchange)."""
    rss: list[int] = []
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=600)) as session:
        async with session.post(f"{origin}/mcp/json", data=request_body(1), headers=HEADERS) as r:
            await r.read()
        if kind == "json":
            head = request_body(2)[:-3] + b',"pad":"'
            body = head + b"x" * (size - len(head) - 5) + b'"}}}'
            url = f"{origin}/mcp/big"
        elif kind == "sse":
            body, url = request_body(2), f"{origin}/mcp/bigsse?size={size}"
        else:
            body, url = request_body(2), f"{origin}/mcp/stream?n={n}"

        async def sample() -> None:
            while sampler is not None:
                sampler.sample()
                rss.append(sampler.memory.rss_kb)
                await asyncio.sleep(POLL)

        sampling = asyncio.get_running_loop().create_task(sample())
        t0 = time.perf_counter()
        got = 0
        async with session.post(url, data=body, headers=HEADERS) as response:
            async for chunk in response.content.iter_any():
                got += len(chunk)
        seconds = time.perf_counter() - t0
        sampling.cancel()
        if response.status != 200 or got < (size if kind != "stream" else n * 100):
            raise RuntimeError(f"{kind}: status {response.status}, {got} bytes")
    if sampler is not None and rss:
        third = len(rss) // 3  # (a short stream may give one sample only)
        sampler.rss_path = (rss[third], rss[-1])  # type: ignore[attr-defined]
    return seconds


def one_run(
    upstream: Helper,
    side: str,
    kind: str,
    size: int,
    n: int,
    workdir: Path,
    profile: Path | None = None,
    extra: list[str] | None = None,
    settled: bool = True,
    keep: Path | None = None,
) -> dict:
    label = f"{kind}-{side}-{time.monotonic_ns()}"
    mcpeek = bare = None
    if side == "mcpeek":
        mcpeek = Mcpeek(upstream.origin + "/mcp", workdir, label, extra or [], profile)
        origin = f"http://127.0.0.1:{mcpeek.port}"
        if settled:
            settle(mcpeek)
    elif side == "bare":
        bare = Helper([PYTHON, str(BARE_PROXY), upstream.origin])
        origin = bare.origin
    else:
        origin = upstream.origin
    cpu0 = proc_cpu(mcpeek.pid) if mcpeek is not None else None
    try:
        seconds = asyncio.run(exchange(origin, kind, size, n, mcpeek))
    except BaseException:
        if mcpeek is not None:  # else it outlives the script, holding its output open
            mcpeek.stop()
        raise
    finally:
        if bare is not None:
            bare.stop()
    out: dict = {"seconds": seconds}
    if mcpeek is not None:
        settle(mcpeek)  # its recording done
        cpu1 = proc_cpu(mcpeek.pid)
        out["cpu"] = cpu1 - cpu0 if cpu0 is not None and cpu1 is not None else float("nan")
        out["exit"] = mcpeek.stop()
        out["rss"] = mcpeek.memory.hwm_kb / 1024
        out["worker_rss"] = mcpeek.worker_memory.hwm_kb / 1024
        out["rss_path"] = getattr(mcpeek, "rss_path", None)
        s2c = {"json": 1, "sse": 1, "stream": n + 1}[kind]
        check = check_capture(mcpeek.capture, 2, 1)
        check.expected_s2c = 1 + s2c
        out["capture"] = check.describe()
        if keep is not None:  # for lint and the worker to be measured on it later
            mcpeek.capture.replace(keep / f"{kind}.jsonl")
        else:
            mcpeek.capture.unlink()
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=float, default=16, help="MB per big message (16)")
    parser.add_argument("--stream", type=int, default=1_000_000, help="events in the stream")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--kinds", default="json,sse,stream")
    parser.add_argument("--sides", default="direct,bare,mcpeek")
    parser.add_argument("--quick", action="store_true", help="1 round, a 100k-event stream")
    parser.add_argument(
        "--no-settle",
        action="store_true",
        help="measure as soon as mcpeek listens, its worker's start-up included",
    )
    parser.add_argument(
        "--mcpeek-args",
        default="",
        metavar="ARGS",
        help="more arguments for mcpeek http, split on spaces (e.g. --no-check)",
    )
    parser.add_argument(
        "--profile",
        action="store_true",
        help="also one mcpeek run per kind under cProfile (not counted), its top functions",
    )
    parser.add_argument("--keep", type=Path, help="keep mcpeek's last capture per kind here")
    args = parser.parse_args()
    size = int(args.size * (1 << 20))
    n = 100_000 if args.quick else args.stream
    rounds = 1 if args.quick else args.rounds
    sides = args.sides.split(",")
    mcpeek_args = args.mcpeek_args.split()
    settled = not args.no_settle
    say(f"mcpeek http big-message benchmark; python {sys.version.split()[0]}, ")
    say(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}; {rounds} rounds")
    say(f"json: {size} B request + {size} B response; sse: one {size} B event; stream: {n} events")
    results: dict[tuple[str, str], list[dict]] = {}
    upstream = Helper([PYTHON, str(UPSTREAM)])
    try:
        with tempfile.TemporaryDirectory(prefix="mcpeek-bench-") as tmp:
            for kind in args.kinds.split(","):
                for r in range(rounds):
                    for side in sides:
                        out = one_run(
                            upstream,
                            side,
                            kind,
                            size,
                            n,
                            Path(tmp),
                            None,
                            mcpeek_args,
                            settled,
                            args.keep,
                        )
                        results.setdefault((kind, side), []).append(out)
                        detail = ""
                        if side == "mcpeek":
                            detail = (
                                f" exit {out['exit']}; mcpeek CPU {out['cpu']:.2f} s (warm-up and "
                                f"recording included); peak RSS mcpeek {out['rss']:.1f} MB, "
                                f"worker {out['worker_rss']:.1f} MB; RSS at 1/3 and end "
                                f"{out['rss_path']}; {out['capture']}"
                            )
                        say(f"  {kind} round {r + 1} {side:<6} {out['seconds']:7.3f} s{detail}")
                if args.profile:
                    prof = Path(tmp) / f"{kind}.prof"
                    out = one_run(upstream, "mcpeek", kind, size, n, Path(tmp), prof, mcpeek_args)
                    print_profile(prof, f"{kind} ({out['seconds']:.3f} s under the profiler)")
    finally:
        upstream.stop()
    say("\nsummary (medians)")
    for kind in args.kinds.split(","):
        base = statistics.median(o["seconds"] for o in results[(kind, "direct")])
        line = f"  {kind:<6} direct {base:.3f} s"
        for side in sides[1:]:
            t = statistics.median(o["seconds"] for o in results[(kind, side)])
            line += f"; {side} {t:.3f} s ({t / base:.1f}x)"
        if (kind, "mcpeek") in results:
            rss = statistics.median(o["rss"] for o in results[(kind, "mcpeek")])
            wrss = statistics.median(o["worker_rss"] for o in results[(kind, "mcpeek")])
            cpu = statistics.median(o["cpu"] for o in results[(kind, "mcpeek")])
            line += f"; mcpeek CPU {cpu:.2f} s; peak RSS mcpeek {rss:.1f} MB, worker {wrss:.1f} MB"
        say(line)
    say(f"  load average now {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
