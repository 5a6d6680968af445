#!/usr/bin/env python3
"""Benchmark the mcpeek Streamable HTTP reverse proxy against a direct connection.

    python tests/bench/http_relay.py [--quick] [--requests N] [--rounds R] [--no-reference]
                                     [--mcpeek-arg ARG]... [--profile] [--keep DIR]

A plain script, not a test: it prints figures and asserts nothing about
timing. It starts ``http_upstream.py`` (an aiohttp server in its own
process) once, then measures, for each cell (JSON or SSE responses, at
concurrency 1, 8 and 32), an aiohttp client with a connection pool as large as
the concurrency POSTing N JSON-RPC ``tools/call`` requests:

* direct: client -> upstream;
* plain: client -> ``tcp_relay.py`` -> upstream, a plain TCP byte relay on
  asyncio that parses nothing: the least any Python relay costs here, and the
  reference of the issue's fallback target (``--no-reference`` leaves it out);
* min: client -> ``http_min_proxy.py`` -> upstream, the least an HTTP-aware
  Python proxy costs: each request and response parsed with httptools on
  asyncio protocols, the request head written again, nothing recorded (what
  parsing HTTP in Python costs over the plain relay);
* bare: client -> ``http_bare_proxy.py`` -> upstream, a reverse proxy built
  like mcpeek's on aiohttp that records and checks nothing: the floor for
  any such proxy on this machine (``--no-reference`` leaves it out);
* mcpeek: client -> ``python -m mcpeek http --upstream URL --listen
  127.0.0.1:0 -w <tmp> -q`` -> upstream (a fresh mcpeek per cell).

A JSON response is one ~210-byte result (``application/json``); an SSE
response is two events (a progress notification, then the result). For
each run: requests/s, p50/p99 latency of a whole exchange (POST sent to
body read), and the CPU time each process spent per request. For mcpeek:
its peak RSS (VmHWM, polled from /proc until it exits) and that of its
live-checks worker (``python -m mcpeek.inspector.cli.live_worker``, its child),
which follows the capture and runs the rules beside the relay, on the same
cores; the worker's CPU is counted until it exits, so it includes the
backlog it catches up on after the clock stopped.

Each mcpeek run stops mcpeek with SIGINT and checks that it exits 0, then
checks its capture: one ``"k":"msg"`` record per JSON-RPC message (one c2s
per request, one s2c per JSON response, two per SSE response), three
``http`` records per exchange, every exchange ``complete``; and it counts
the ``violation`` records the live checks added (the traffic is valid, so
there should be none). The clocks start after a warm-up that opens the
pool's connections, and after mcpeek's live-checks worker has started (its
imports and rule set-up, about 0.2 s of CPU paid once before a user's first
request, are printed apart: in the window of a short run they counted as a
per-request cost). The machine may have few cores: runs are strictly
sequential, and the load average is printed at the start and the end.

Each cell is measured in ``--rounds`` rounds (3; 1 with ``--quick``), the
sides' order reversed every other round, so that a slow spell of the
machine falls on each side in turn. A ratio in the summary is the median of
the rounds' ratios (each round's sides ran minutes apart at most); the
added latencies are medians of the rounds' too; the CPU and per-side lines
are those of the round with the median rate; a throughput target's row
also shows its rounds' lowest and highest ratio. On a small machine whose
reference relays swing by 30% from one run to the next, one round is a hint,
not a figure.

``--profile`` adds one more mcpeek run per concurrency-32 cell with mcpeek
under cProfile (CPU time), and prints where its time goes (not counted in
the figures). ``--mcpeek-arg`` passes an extra argument to every mcpeek
(e.g. ``--mcpeek-arg=--no-check``). ``--keep DIR`` keeps mcpeek's captures there
(``lint_instructions.py --http`` counts lint's instructions on one).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import os
import pstats
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp
from procstat import proc_cpu, proc_status
from profile_layers import report as layer_report

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
UPSTREAM = HERE / "http_upstream.py"
BARE_PROXY = HERE / "http_bare_proxy.py"
PLAIN_RELAY = HERE / "tcp_relay.py"
MIN_PROXY = HERE / "http_min_proxy.py"
# side -> its relay script
REFERENCES = {"plain": PLAIN_RELAY, "min": MIN_PROXY, "bare": BARE_PROXY}
PYTHON = sys.executable


@dataclass(frozen=True)
class Checkout:
    """The mcpeek a run measures: its source tree, and a Python that imports it there
    (in the proxy and in the children it starts with ``-I``, its live-checks worker).
    This venv's, by default; another revision's with ``http_compare.py``."""

    root: Path = ROOT
    python: str = PYTHON


CELL_TIMEOUT = 120.0  # seconds for one run's requests before we give up
START_TIMEOUT = 15.0  # seconds for mcpeek/the upstream to start listening
SETTLE = 0.1  # seconds between two looks at the worker's CPU while it starts
EXIT_TIMEOUT = 90.0  # seconds for mcpeek to exit after SIGINT (its worker gets 60)
POLL = 0.02  # seconds between /proc samples while traffic flows
MCP = "io.modelcontextprotocol/"
VERSION = "2026-07-28"

TARGETS = {
    "throughput_c32": 0.6,  # proxied/direct requests/s at concurrency 8 and 32
    # ... or, where the plain relay itself gets less than 0.7x direct, this much of it
    "plain_below": 0.7,
    "of_plain": 0.85,
    "p50_added_ms": 1.0,  # proxied - direct p50 at concurrency 1
}

HEADERS = {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": VERSION,
    "Mcp-Method": "tools/call",
    "Mcp-Name": "get_weather",
}
REQ_HEAD = b'{"jsonrpc":"2.0","id":'
REQ_MID = (
    b',"method":"tools/call","params":{"name":"get_weather","arguments":{"city":"Paris"},'
    b'"_meta":{"'
    + (MCP + 'protocolVersion":"' + VERSION + '","').encode()
    + (MCP + 'clientCapabilities":{},"').encode()
    + (MCP + 'clientInfo":{"name":"bench-client","version":"1.0"},').encode()
    + b'"progressToken":'
)
REQ_TAIL = b"}}}"


def request_body(ident: int) -> bytes:
    i = b"%d" % ident
    return b"".join((REQ_HEAD, i, REQ_MID, i, REQ_TAIL))


# -- /proc helpers ----------------------------------------------------------------------


def children(pid: int) -> list[int]:
    """Child pids of every thread of ``pid``."""
    kids: list[int] = []
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except FileNotFoundError:
        return kids
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                kids.extend(int(k) for k in f.read().split())
        except FileNotFoundError:
            pass
    return kids


def find_worker(pid: int) -> int | None:
    """The live-checks worker among mcpeek's children."""
    for kid in children(pid):
        try:
            with open(f"/proc/{kid}/cmdline", "rb") as f:
                if b"live_worker" in f.read():
                    return kid
        except FileNotFoundError:
            pass
    return None


def _delta(after: float | None, before: float | None) -> float | None:
    return None if after is None or before is None else after - before


# -- the processes ------------------------------------------------------------------------


def wait_line(proc: subprocess.Popen[bytes], prefix: bytes) -> bytes:
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line.startswith(prefix):
        proc.kill()
        raise RuntimeError(f"expected {prefix!r} from {proc.args!r}, got {line[:200]!r}")
    return line


class Helper:
    """A helper process of ours that prints ``listening <port>`` and stops at stdin EOF."""

    def __init__(self, argv: list[str]) -> None:
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=ROOT)
        self.pid = self.proc.pid
        self.port = int(wait_line(self.proc, b"listening ").split()[1])
        self.origin = f"http://127.0.0.1:{self.port}"

    def stop(self) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            return self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()


@dataclass
class Memory:
    hwm_kb: int = 0
    rss_kb: int = 0  # the last VmRSS seen

    def sample(self, pid: int | None) -> bool:
        if pid is None:
            return False
        status = proc_status(pid)
        if "VmHWM" not in status:
            return False
        self.hwm_kb = max(self.hwm_kb, status["VmHWM"])
        self.rss_kb = status["VmRSS"]
        return True


@dataclass
class CaptureCheck:
    size: int = 0
    msgs: int = 0
    c2s: int = 0
    s2c: int = 0
    http: int = 0
    complete: int = 0
    violations: dict[str, int] = field(default_factory=dict)
    expected_requests: int = 0
    expected_s2c: int = 0

    @property
    def expected_msgs(self) -> int:
        return self.expected_requests + self.expected_s2c

    @property
    def ok(self) -> bool:
        n = self.expected_requests
        return (
            self.msgs == self.expected_msgs
            and self.c2s == n
            and self.s2c == self.expected_s2c
            and self.http == 3 * n
            and self.complete == n
        )

    def describe(self) -> str:
        verdict = "OK" if self.ok else "MISMATCH"
        flagged = sum(self.violations.values())
        text = (
            f"capture {self.size / 1e6:.1f} MB: {self.msgs} msg records (c2s {self.c2s}, "
            f"s2c {self.s2c}; expected {self.expected_msgs}), {self.http} http records "
            f"({self.complete} complete exchanges of {self.expected_requests}) {verdict}; "
            f"{flagged} violations"
        )
        if flagged:
            text += " (" + ", ".join(f"{r} x{n}" for r, n in sorted(self.violations.items())) + ")"
        return text


def check_capture(path: Path, requests: int, s2c_per_request: int) -> CaptureCheck:
    check = CaptureCheck(
        size=path.stat().st_size,
        expected_requests=requests,
        expected_s2c=requests * s2c_per_request,
    )
    with open(path, "rb", buffering=1 << 20) as f:
        for line in f:
            head = line[:120]
            if b'"k":"msg"' in head:
                check.msgs += 1
                if b'"dir":"c2s"' in head:
                    check.c2s += 1
                elif b'"dir":"s2c"' in head:
                    check.s2c += 1
            elif b'"k":"http"' in head:
                check.http += 1
                if b'"phase":"end"' in line and b'"reason":"complete"' in line:
                    check.complete += 1
            elif b'"k":"violation"' in head:
                at = line.find(b'"rule":"')
                rule = line[at + 8 : line.find(b'"', at + 8)].decode() if at >= 0 else "?"
                check.violations[rule] = check.violations.get(rule, 0) + 1
    return check


# mcpeek under cProfile, timing CPU rather than wall time (an idle epoll wait is not cost)
PROFILED = r"""
import cProfile, sys, time
out = sys.argv[1]
sys.argv = ["mcpeek", *sys.argv[2:]]
from mcpeek.inspector.cli.main import main
profiler = cProfile.Profile(time.process_time)
profiler.enable()
try:
    code = main()
finally:
    profiler.disable()
    profiler.dump_stats(out)
sys.exit(code)
"""


class Mcpeek:
    """``python -m mcpeek http`` in front of the upstream, listening on a free port."""

    def __init__(
        self,
        upstream: str,
        workdir: Path,
        label: str,
        extra: list[str],
        profile: Path | None = None,
        source: Checkout = Checkout(),
    ) -> None:
        self.capture = workdir / f"{label}.jsonl"
        self.stderr_path = workdir / f"{label}.stderr"
        python = source.python
        prefix = [python, "-c", PROFILED, str(profile)] if profile else [python, "-m", "mcpeek"]
        argv = [
            *prefix,
            "http",
            "--upstream",
            upstream,
            "--listen",
            "127.0.0.1:0",
            "-w",
            str(self.capture),
            "-q",
            *extra,
        ]
        with open(self.stderr_path, "wb") as err:
            # In the checkout: ``python -m`` looks for mcpeek there first.
            self.proc = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stderr=err, cwd=source.root
            )
        self.pid = self.proc.pid
        self.memory = Memory()
        self.worker_memory = Memory()
        self.worker_pid: int | None = None
        self.worker_cpu: float | None = None  # the last reading: /proc forgets it at exit
        self.exit_seconds = 0.0
        self.port = self._wait_listening()
        #: the live-checks worker's start-up (seconds, CPU seconds), before any request
        self.worker_start: tuple[float, float] | None = None
        if "--no-check" not in extra:
            self.worker_start = self._wait_worker_settled()

    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace").strip()

    def _wait_listening(self) -> int:
        """The port, from the capture's ``listen`` event (flushed within 50 ms)."""
        deadline = time.monotonic() + START_TIMEOUT
        key = b'"event":"listen"'
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"mcpeek exited {self.proc.returncode} at start-up:\n{self.stderr()}"
                )
            with contextlib.suppress(FileNotFoundError), open(self.capture, "rb") as f:
                for line in f:
                    if key in line:
                        addr = line[line.index(b'"addr":"') + 8 :].split(b'"', 1)[0]
                        self.sample()
                        return int(addr.rsplit(b":", 1)[1])
            time.sleep(0.01)
        self.kill()
        raise RuntimeError(f"mcpeek did not start listening in {START_TIMEOUT}s:\n{self.stderr()}")

    def _wait_worker_settled(self) -> tuple[float, float] | None:
        """Wait for the live-checks worker to finish starting (its imports and rule set-up,
        a one-time cost a user pays before their first request, not per request): until
        its CPU time stops growing. Without this, the worker's start-up would land in the
        measured window of a short run and count as a per-request cost."""
        t0 = time.monotonic()
        deadline = t0 + START_TIMEOUT
        last: float | None = None
        while time.monotonic() < deadline:
            time.sleep(SETTLE)
            self.sample()
            cpu = self.worker_cpu
            if cpu is not None and last is not None and cpu - last < SETTLE / 20:
                return time.monotonic() - t0, cpu
            last = cpu
        return None

    def sample(self) -> None:
        self.memory.sample(self.pid)
        if self.worker_pid is None:
            self.worker_pid = find_worker(self.pid)
        if self.worker_memory.sample(self.worker_pid):
            self.worker_cpu = proc_cpu(self.worker_pid)

    def stop(self) -> int:
        """SIGINT, then poll both processes' VmHWM until mcpeek exits."""
        self.sample()
        t0 = time.perf_counter()
        self.proc.send_signal(signal.SIGINT)
        deadline = time.monotonic() + EXIT_TIMEOUT
        while True:
            self.sample()
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                self.kill()
                raise RuntimeError(f"mcpeek did not exit within {EXIT_TIMEOUT}s of SIGINT")
            time.sleep(0.005)
        self.exit_seconds = time.perf_counter() - t0
        self.proc.returncode = os.waitstatus_to_exitcode(status)
        return self.proc.returncode

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


# -- the client ------------------------------------------------------------------------------


@dataclass
class Run:
    side: str  # direct, plain, bare, mcpeek
    requests: int
    seconds: float
    latencies: list[float]  # ms, sorted
    client_cpu: float
    upstream_cpu: float | None
    proxy_cpu: float | None = None  # the reference relay's or mcpeek's
    worker_cpu: float | None = None
    mcpeek: Mcpeek | None = None
    exit_code: int | None = None
    capture: CaptureCheck | None = None

    @property
    def rate(self) -> float:
        return self.requests / self.seconds

    def pct(self, q: float) -> float:
        s = self.latencies
        return s[min(len(s) - 1, round(q * (len(s) - 1)))]

    @property
    def p50(self) -> float:
        return statistics.median(self.latencies)

    def us(self, cpu: float | None) -> float | None:
        return None if cpu is None else cpu / self.requests * 1e6

    def describe_cpu(self) -> str:
        def shown(cpu: float | None) -> str:
            value = self.us(cpu)
            return "?" if value is None else f"{value:.0f}"

        parts = [f"client {shown(self.client_cpu)}", f"upstream {shown(self.upstream_cpu)}"]
        if self.side in REFERENCES:
            parts.append(f"{self.side} relay {shown(self.proxy_cpu)}")
        elif self.side == "mcpeek":
            parts += [f"mcpeek {shown(self.proxy_cpu)}", f"worker {shown(self.worker_cpu)}"]
        return "cpu us/req: " + ", ".join(parts)


async def _client_run(
    url: str,
    n: int,
    warmup: int,
    concurrency: int,
    sampler: Mcpeek | None,
    on_start: Callable[[], None],
) -> tuple[float, list[float]]:
    latencies: list[float] = []
    connector = aiohttp.TCPConnector(limit=concurrency, force_close=False)
    async with aiohttp.ClientSession(
        connector=connector, timeout=aiohttp.ClientTimeout(total=30)
    ) as session:
        next_id = 1

        async def one(ident: int, keep: bool) -> None:
            body = request_body(ident)
            t0 = time.perf_counter_ns()
            async with session.post(url, data=body, headers=HEADERS) as response:
                data = await response.read()
            elapsed = time.perf_counter_ns() - t0
            if response.status != 200 or b'"id":%d,"result"' % ident not in data:
                raise RuntimeError(f"bad answer to id {ident}: {response.status} {data[:120]!r}")
            if keep:
                latencies.append(elapsed / 1e6)

        async def worker(stop_at: int, keep: bool) -> None:
            nonlocal next_id
            while next_id < stop_at:
                ident = next_id
                next_id += 1
                await one(ident, keep)

        # warm-up: every pooled connection opened, both ends' code paths hot
        await asyncio.gather(*(worker(1 + warmup, False) for _ in range(concurrency)))
        sampling = None
        if sampler is not None:

            async def sample_forever() -> None:
                while True:
                    sampler.sample()
                    await asyncio.sleep(POLL)

            sampling = asyncio.get_running_loop().create_task(sample_forever())
        stop_at = next_id + n
        on_start()
        t0 = time.perf_counter()
        try:
            await asyncio.wait_for(
                asyncio.gather(*(worker(stop_at, True) for _ in range(concurrency))),
                CELL_TIMEOUT,
            )
        finally:
            seconds = time.perf_counter() - t0
            if sampling is not None:
                sampling.cancel()
    latencies.sort()
    return seconds, latencies


def run_cell(
    upstream: Helper,
    kind: str,
    concurrency: int,
    n: int,
    warmup: int,
    side: str,
    workdir: Path,
    extra: list[str],
    profile: Path | None = None,
    keep: Path | None = None,
    source: Checkout = Checkout(),
) -> Run:
    label = f"{kind}-c{concurrency}-{side}"
    mcpeek = reference = None
    try:
        if side == "mcpeek":
            mcpeek = Mcpeek(upstream.origin + "/mcp", workdir, label, extra, profile, source)
            proxy_pid: int | None = mcpeek.pid
            origin = f"http://127.0.0.1:{mcpeek.port}"
        elif side in REFERENCES:
            reference = Helper([PYTHON, str(REFERENCES[side]), upstream.origin])
            proxy_pid, origin = reference.pid, reference.origin
        else:
            proxy_pid, origin = None, upstream.origin
        url = f"{origin}/mcp/{kind}"
        cpu0: dict[str, float | None] = {}

        def on_start() -> None:  # after the warm-up, as the clock starts
            cpu0["client"] = time.process_time()
            cpu0["upstream"] = proc_cpu(upstream.pid)
            cpu0["proxy"] = proc_cpu(proxy_pid)
            if mcpeek is not None:
                mcpeek.sample()
                cpu0["worker"] = mcpeek.worker_cpu

        seconds, latencies = asyncio.run(_client_run(url, n, warmup, concurrency, mcpeek, on_start))
        run = Run(
            side=side,
            requests=n,
            seconds=seconds,
            latencies=latencies,
            client_cpu=time.process_time() - (cpu0["client"] or 0.0),
            upstream_cpu=_delta(proc_cpu(upstream.pid), cpu0["upstream"]),
            proxy_cpu=_delta(proc_cpu(proxy_pid), cpu0["proxy"]),
        )
        if reference is not None:
            reference.stop()
        if mcpeek is not None:
            run.mcpeek = mcpeek
            run.exit_code = mcpeek.stop()
            run.worker_cpu = _delta(mcpeek.worker_cpu, cpu0["worker"])
            run.capture = check_capture(mcpeek.capture, n + warmup, 2 if kind == "sse" else 1)
            if run.exit_code != 0:
                say(f"  mcpeek exited {run.exit_code}; its stderr:\n{mcpeek.stderr()}")
            if keep is not None:  # for lint and the worker to be measured on it later
                mcpeek.capture.replace(keep / mcpeek.capture.name)
            else:
                mcpeek.capture.unlink()
        return run
    except BaseException:
        if reference is not None:
            reference.proc.kill()
            reference.proc.wait()
        if mcpeek is not None:
            mcpeek.kill()
            with contextlib.suppress(OSError):
                say(f"  mcpeek's stderr:\n{mcpeek.stderr()}")
        raise


# -- reporting ---------------------------------------------------------------------------


def say(text: str = "") -> None:
    print(text, flush=True)


def print_profile(path: Path, label: str, requests: int | None = None, limit: int = 25) -> None:
    out = io.StringIO()
    stats = pstats.Stats(str(path), stream=out)
    stats.strip_dirs().sort_stats("tottime").print_stats(limit)
    say(f"\n  cProfile of mcpeek (CPU time, start-up included), {label}; top {limit} by own time:")
    lines = out.getvalue().splitlines()
    start = next((i for i, line in enumerate(lines) if "ncalls" in line), 0)
    for line in lines[start:]:
        if line.strip():
            say("    " + line.rstrip())
    for line in layer_report(str(path), requests):
        say("    " + line)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer requests (a quick look)")
    parser.add_argument(
        "--rounds", type=int, help="rounds per cell, sides alternating (3; 1 with --quick)"
    )
    parser.add_argument("--requests", type=int, help="requests per run (default 2000)")
    parser.add_argument(
        "--no-reference",
        action="store_true",
        help="leave out the reference relays (plain TCP, parsing-only, bare aiohttp)",
    )
    parser.add_argument(
        "--mcpeek-arg",
        action="append",
        default=[],
        metavar="ARG",
        help="an extra argument for mcpeek http (repeatable)",
    )
    parser.add_argument(
        "--profile", action="store_true", help="also profile mcpeek at concurrency 32"
    )
    parser.add_argument("--keep", type=Path, help="keep mcpeek's captures in this folder")
    args = parser.parse_args()
    if args.keep is not None:
        args.keep.mkdir(parents=True, exist_ok=True)
    quick = args.quick
    n = args.requests or (500 if quick else 2000)
    warmup = 50 if quick else 200
    rounds = args.rounds if args.rounds is not None else (1 if quick else 3)
    if rounds < 1:
        parser.error(f"--rounds {rounds}: expected 1 or more")
    cells = [("json", 1), ("sse", 1), ("json", 8), ("sse", 8), ("json", 32), ("sse", 32)]
    sides = (
        ["direct", "mcpeek"] if args.no_reference else ["direct", "plain", "min", "bare", "mcpeek"]
    )
    extra: list[str] = args.mcpeek_arg

    say(f"mcpeek http relay benchmark{' (--quick)' if quick else ''}")
    say(
        f"python {sys.version.split()[0]}, aiohttp {aiohttp.__version__}; {os.cpu_count()} CPUs; "
        f"load average {os.getloadavg()[0]:.2f}"
    )
    say(f"direct: aiohttp client -> {UPSTREAM.name}")
    if "bare" in sides:
        say(f"plain:  aiohttp client -> {PLAIN_RELAY.name} (bytes only) -> {UPSTREAM.name}")
        say(f"min:    aiohttp client -> {MIN_PROXY.name} (parses HTTP only) -> {UPSTREAM.name}")
        say(f"bare:   aiohttp client -> {BARE_PROXY.name} (records nothing) -> {UPSTREAM.name}")
    say(
        "mcpeek: aiohttp client -> python -m mcpeek http --upstream URL "
        f"--listen 127.0.0.1:0 -w <tmp> -q{''.join(' ' + a for a in extra)} -> {UPSTREAM.name}"
    )
    say(
        f"{n} requests per run after {warmup} warm-up requests; fresh proxies per run; "
        f"{rounds} round(s) per cell, sides alternating; latency = POST sent to whole body read"
    )
    started = time.perf_counter()
    rounds_of: dict[tuple[str, int, str], list[Run]] = {}  # every round's run, in order
    results: dict[tuple[str, int, str], Run] = {}  # the run of the median rate

    def ratios(kind: str, c: int, side: str = "mcpeek", base: str = "direct") -> list[float]:
        """Each round's ratio of ``side``'s rate to ``base``'s, lowest first."""
        pairs = zip(rounds_of[(kind, c, side)], rounds_of[(kind, c, base)], strict=True)
        return sorted(a.rate / b.rate for a, b in pairs)

    def ratio(kind: str, c: int, side: str = "mcpeek", base: str = "direct") -> float:
        """The median of the rounds' ratios of ``side``'s rate to ``base``'s."""
        return statistics.median(ratios(kind, c, side, base))

    def spread(kind: str, c: int, side: str = "mcpeek", base: str = "direct") -> str:
        """``rounds LO-HIx``, the rounds' lowest and highest ratio (``""`` for one
        round): how far one round's figure can be trusted on the machine of the day."""
        each = ratios(kind, c, side, base)
        return f"rounds {each[0]:.2f}-{each[-1]:.2f}x" if len(each) > 1 else ""

    def added(
        kind: str, c: int, q: float | None = None, side: str = "mcpeek", base: str = "direct"
    ) -> float:
        """The median of the rounds' latency added by ``side`` over ``base`` (p50, or ``q``)."""
        pairs = zip(rounds_of[(kind, c, side)], rounds_of[(kind, c, base)], strict=True)
        return statistics.median(
            a.p50 - b.p50 if q is None else a.pct(q) - b.pct(q) for a, b in pairs
        )

    upstream = Helper([PYTHON, str(UPSTREAM)])
    try:
        with tempfile.TemporaryDirectory(prefix="mcpeek-bench-") as tmp:
            workdir = Path(tmp)
            for number, (kind, concurrency) in enumerate(cells, 1):
                what = (
                    "application/json, one ~210-byte result"
                    if kind == "json"
                    else "text/event-stream, a progress event + the result"
                )
                say(f"\n[{number}] {kind.upper()} responses ({what}), concurrency {concurrency}")
                for round_no, side in _schedule(sides, rounds):
                    run = run_cell(
                        upstream, kind, concurrency, n, warmup, side, workdir, extra, keep=args.keep
                    )
                    rounds_of.setdefault((kind, concurrency, side), []).append(run)
                    shown = f"{side} #{round_no}" if rounds > 1 else side
                    say(
                        f"  {shown:<9}: {run.rate:7,.0f} req/s  p50 {run.p50:7.3f} ms  "
                        f"p99 {run.pct(0.99):7.3f} ms   {run.describe_cpu()}"
                    )
                    if run.mcpeek is not None:
                        m = run.mcpeek
                        worker = (
                            f"{m.worker_memory.hwm_kb / 1024:.1f} MB"
                            if m.worker_pid
                            else "not found"
                        )
                        worker_started = (
                            f"worker started in {m.worker_start[0]:.2f} s "
                            f"({m.worker_start[1]:.2f} s CPU) before the first request; "
                            if m.worker_start is not None
                            else ""
                        )
                        say(
                            f"          {worker_started}exit {run.exit_code} "
                            f"{m.exit_seconds:.2f}s after SIGINT; "
                            f"peak RSS mcpeek {m.memory.hwm_kb / 1024:.1f} MB, worker {worker}"
                        )
                        assert run.capture is not None
                        say(f"          {run.capture.describe()}")
                for side in sides:
                    runs = sorted(rounds_of[(kind, concurrency, side)], key=lambda r: r.rate)
                    results[(kind, concurrency, side)] = runs[(len(runs) - 1) // 2]
                for side in sides[1:]:
                    say(
                        f"  {side}/direct: {ratio(kind, concurrency, side):.2f}x req/s; added p50 "
                        f"{added(kind, concurrency, side=side):+.3f} ms, "
                        f"p99 {added(kind, concurrency, 0.99, side):+.3f} ms"
                    )
                for ref in (side for side in sides if side in REFERENCES):
                    say(
                        f"  mcpeek/{ref}: {ratio(kind, concurrency, 'mcpeek', ref):.2f}x req/s; "
                        f"added p50 {added(kind, concurrency, base=ref):+.3f} ms"
                    )
            if args.profile:
                for kind in ("json", "sse"):
                    prof = workdir / f"{kind}.prof"
                    run = run_cell(
                        upstream, kind, 32, n, warmup, "mcpeek", workdir, extra, profile=prof
                    )
                    print_profile(
                        prof,
                        f"{kind.upper()} at concurrency 32, {n + warmup} requests "
                        f"({run.rate:,.0f} req/s under the profiler)",
                        n + warmup,
                    )
    finally:
        upstream_exit = upstream.stop()

    mcpeek_runs = [r for (_, _, side), runs in rounds_of.items() if side == "mcpeek" for r in runs]
    captures = [r.capture for r in mcpeek_runs if r.capture is not None]
    total_msgs = sum(c.msgs for c in captures)
    expected_msgs = sum(c.expected_msgs for c in captures)
    flagged = sum(sum(c.violations.values()) for c in captures)
    exits = [r.exit_code for r in mcpeek_runs]
    peak = max(r.mcpeek.memory.hwm_kb for r in mcpeek_runs if r.mcpeek) / 1024
    worker_peak = max(r.mcpeek.worker_memory.hwm_kb for r in mcpeek_runs if r.mcpeek) / 1024

    rows: list[tuple[str, str, str, bool | None]] = []
    for kind, c in (("json", 8), ("sse", 8), ("json", 32), ("sse", 32)):
        r = ratio(kind, c)
        target = TARGETS["throughput_c32"]
        if "plain" in sides and ratio(kind, c, "plain") < TARGETS["plain_below"]:
            # The fallback: the machine of the day cannot relay at 0.7x at all.
            of_plain = ratio(kind, c, "mcpeek", "plain")
            rounds = spread(kind, c, "mcpeek", "plain")
            rows.append(
                (
                    f"{kind.upper()} c={c} throughput, mcpeek/plain "
                    f"(plain/direct {ratio(kind, c, 'plain'):.2f}x < {TARGETS['plain_below']}"
                    f"{'; ' + rounds if rounds else ''})",
                    f"{of_plain:.2f}x",
                    f">= {TARGETS['of_plain']}x",
                    of_plain >= TARGETS["of_plain"],
                )
            )
            continue
        rounds = spread(kind, c)
        rows.append(
            (
                f"{kind.upper()} c={c} throughput, mcpeek/direct"
                + (f" ({rounds})" if rounds else ""),
                f"{r:.2f}x",
                f">= {target}x",
                r >= target,
            )
        )
    for kind in ("json", "sse"):
        a = added(kind, 1)
        target = TARGETS["p50_added_ms"]
        rows.append(
            (f"{kind.upper()} c=1 added p50 latency", f"{a:.3f} ms", f"<= {target} ms", a <= target)
        )
    for kind in ("json", "sse"):
        rows.append(
            (
                f"{kind.upper()} c=1 throughput, mcpeek/direct",
                f"{ratio(kind, 1):.2f}x",
                "(info)",
                None,
            )
        )
        rows.append(
            (
                f"{kind.upper()} c=1 added p99 latency",
                f"{added(kind, 1, 0.99):.3f} ms",
                "(info)",
                None,
            )
        )
    for ref in (side for side in sides if side in REFERENCES):
        for kind in ("json", "sse"):
            rows.append(
                (
                    f"{kind.upper()} c=32 throughput, {ref}/direct",
                    f"{ratio(kind, 32, ref):.2f}x",
                    "(info)",
                    None,
                )
            )
            rows.append(
                (
                    f"{kind.upper()} c=32 throughput, mcpeek/{ref}",
                    f"{ratio(kind, 32, 'mcpeek', ref):.2f}x",
                    "(info)",
                    None,
                )
            )
            rows.append(
                (
                    f"{kind.upper()} c=1 added p50 latency, {ref}",
                    f"{added(kind, 1, side=ref):.3f} ms",
                    "(info)",
                    None,
                )
            )
    if "min" in sides:
        for kind, c in (("json", 8), ("sse", 8), ("json", 32), ("sse", 32)):
            rows.append(
                (
                    f"{kind.upper()} c={c} throughput, min/plain (parsing HTTP alone)",
                    f"{ratio(kind, c, 'min', 'plain'):.2f}x",
                    "(info)",
                    None,
                )
            )
    for kind in ("json", "sse"):
        run = results[(kind, 32, "mcpeek")]
        rows.append(
            (
                f"{kind.upper()} c=32 CPU per request, mcpeek + worker",
                f"{run.us(run.proxy_cpu) or 0:.0f} + {run.us(run.worker_cpu) or 0:.0f} us",
                "(info)",
                None,
            )
        )
    rows += [
        ("mcpeek peak RSS (max over runs)", f"{peak:.1f} MB", "(info)", None),
        ("live worker peak RSS (max over runs)", f"{worker_peak:.1f} MB", "(info)", None),
        (
            "mcpeek exit code after SIGINT",
            ",".join(str(e) for e in exits),
            "all 0",
            all(e == 0 for e in exits),
        ),
        (
            "capture msg records",
            f"{total_msgs}/{expected_msgs}",
            "all",
            all(c.ok for c in captures),
        ),
        ("violations flagged on valid traffic", str(flagged), "0", flagged == 0),
    ]
    say("\nsummary")
    w0 = max(len(r[0]) for r in rows)
    w1 = max(len(r[1]) for r in rows)
    w2 = max(len(r[2]) for r in rows)
    say(f"  {'figure':<{w0}}  {'value':>{w1}}  {'target':<{w2}}  result")
    for name, value, wanted, ok in rows:
        verdict = "-" if ok is None else ("PASS" if ok else "MISS")
        say(f"  {name:<{w0}}  {value:>{w1}}  {wanted:<{w2}}  {verdict}")
    for c in (1, 8, 32):
        for side in sides:
            say(
                f"  c={c:<2} {side:<6}: "
                + ", ".join(
                    f"{k.upper()} {results[(k, c, side)].rate:,.0f} req/s p50 "
                    f"{results[(k, c, side)].p50:.3f} ms"
                    for k in ("json", "sse")
                )
            )
    if upstream_exit != 0:
        say(f"  (the upstream exited {upstream_exit})")
    say(f"  load average now {os.getloadavg()[0]:.2f}")
    say(f"  total time {time.perf_counter() - started:.1f} s")
    return 0


def _schedule(sides: list[str], rounds: int) -> list[tuple[int, str]]:
    """(round, side) in the order they run: every other round backwards."""
    return [
        (number, side)
        for number in range(1, rounds + 1)
        for side in (sides if number % 2 else sides[::-1])
    ]


if __name__ == "__main__":
    raise SystemExit(main())
