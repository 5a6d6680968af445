#!/usr/bin/env python3
"""Benchmark the mcpeek stdio relay against a direct connection.

    python tests/bench/stdio_relay.py [--quick] [--only-huge] [--huge MIB] [--base64]

A plain script, not a test: it prints figures and asserts nothing about
timing. In one run it measures the client talking to ``echo_server.py``
directly and through ``python -m mcpeek stdio -w <tmp> -q -- python
echo_server.py``:

1. pipelined throughput of 100-byte JSON-RPC requests (a writer thread
   writes N requests as fast as the pipe takes them while a reader thread
   reads the N responses), in request/response pairs per second;
2. sequential round-trip latency (write one line, wait for its answer),
   p50 and p99;
3. MB/s for 1 MiB single-line messages, pipelined the same way (bytes of
   requests per second; every request is echoed back at the same size);
4. mcpeek's peak RSS (VmHWM, polled from /proc/<pid>/status until the
   process exits) after relaying many 100-byte request/response pairs.

Every proxied run checks its capture file: one ``"k":"msg"`` line per
message (two per request/response pair, half of them c2s), so the benchmark
also proves nothing was lost. Each measurement spawns fresh processes and
starts its clock after a first round trip, so start-up is not counted.
The machine may have few cores: runs are strictly sequential.
"""

from __future__ import annotations

import argparse
import binascii
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from procstat import proc_cpu, proc_status

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
ECHO_SERVER = HERE / "echo_server.py"
PYTHON = sys.executable

SMALL = 100  # bytes per message, newline included
BIG = 1 << 20  # 1 MiB single-line messages
WRITE_SLICE = 1 << 18
READ_SIZE = 1 << 20
HEAD = 64  # bytes of a response kept to check its id
TIMEOUT = 300.0  # seconds for any one pipelined transfer before we give up

REQ_HEAD = b'{"jsonrpc":"2.0","id":%d,"method":"bench/echo","params":{"pad":"'
REQ_TAIL = b'"}}\n'
RESP_HEAD = b'{"jsonrpc":"2.0","id":%d,'

TARGETS = {
    "throughput": 0.6,  # through/direct, 100-byte pipelined
    "p50_added_ms": 0.3,
    "big_ratio": 0.8,  # through/direct, 1 MiB pipelined
    "rss_mb": 80.0,
}


# -- messages -------------------------------------------------------------------

_pads: dict[int, bytes] = {}


def request(ident: int, size: int) -> bytes:
    head = REQ_HEAD % ident
    n = size - len(head) - len(REQ_TAIL)
    pad = _pads.get(n)
    if pad is None:
        pad = _pads[n] = b"x" * n
    return b"".join((head, pad, REQ_TAIL))


def small_batches(first: int, count: int, batch: int = 2000) -> Iterator[bytes]:
    """``count`` 100-byte requests with ids from ``first``, joined in batches."""
    end = first + count
    for start in range(first, end, batch):
        yield b"".join([request(i, SMALL) for i in range(start, min(start + batch, end))])


def slices(blob: bytes, size: int = WRITE_SLICE) -> Iterator[memoryview]:
    view = memoryview(blob)
    for i in range(0, len(view), size):
        yield view[i : i + size]


def big_messages(first: int, count: int, size: int = BIG, base64: bool = False) -> Iterator[bytes]:
    """``count`` requests of ``size`` bytes: a run of "x", or (``base64``) standard
    Base64 of random bytes, as a tool's image is (made before the clock starts)."""
    if not base64:
        for i in range(first, first + count):
            yield request(i, size)
        return
    pad = binascii.b2a_base64(os.urandom(size * 3 // 4), newline=False)
    made = []
    for i in range(first, first + count):
        head = REQ_HEAD % i
        made.append(b"".join((head, pad[: size - len(head) - len(REQ_TAIL)], REQ_TAIL)))
    yield from made


# -- /proc helpers -----------------------------------------------------------------


def child_pid(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            kids = f.read().split()
    except FileNotFoundError:
        return None
    return int(kids[0]) if kids else None


# -- one connection -----------------------------------------------------------------


@dataclass
class Cpu:
    wall: float = 0.0
    client: float = 0.0
    relay: float | None = None  # mcpeek (proxied runs only)
    server: float | None = None

    def describe(self) -> str:
        parts = [f"wall {self.wall:.2f}s", f"client {self.client:.2f}s"]
        if self.relay is not None:
            parts.append(f"mcpeek {self.relay:.2f}s")
        if self.server is not None:
            parts.append(f"server {self.server:.2f}s")
        return "cpu: " + ", ".join(parts)


@dataclass
class Exit:
    code: int
    # The last VmHWM polled before exit. (wait4's ru_maxrss is no substitute: it
    # also counts the forked copy of this client before exec, and reaped children.)
    vm_hwm_kb: int
    capture: CaptureCheck | None = None


@dataclass
class CaptureCheck:
    path: Path
    size: int = 0
    msgs: int = 0
    c2s: int = 0
    s2c: int = 0
    partial: int = 0
    expected_pairs: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        n = self.expected_pairs
        return self.msgs == 2 * n and self.c2s == n and self.s2c == n and not self.partial

    def describe(self) -> str:
        verdict = "OK" if self.ok else "MISMATCH"
        return (
            f"capture {self.size / 1e6:.1f} MB, {self.msgs} msg records "
            f"(c2s {self.c2s}, s2c {self.s2c}; expected {2 * self.expected_pairs}) {verdict}"
        )


def check_capture(path: Path, pairs: int) -> CaptureCheck:
    check = CaptureCheck(path=path, size=path.stat().st_size, expected_pairs=pairs)
    key = b'"k":"msg"'
    with open(path, "rb", buffering=1 << 20) as f:
        for line in f:
            if key in line:
                check.msgs += 1
                # dir precedes raw in the record, so search only the head of it
                head = line[:160]
                if b'"dir":"c2s"' in head:
                    check.c2s += 1
                elif b'"dir":"s2c"' in head:
                    check.s2c += 1
                if b'"partial":true' in line[-40:]:
                    check.partial += 1
    return check


class Connection:
    """A spawned peer (the echo server, or mcpeek wrapping it) on two pipes."""

    def __init__(self, proxied: bool, workdir: Path, label: str) -> None:
        self.proxied = proxied
        self.capture: Path | None = None
        argv = [PYTHON, str(ECHO_SERVER)]
        if proxied:
            self.capture = workdir / f"{label}.jsonl"
            argv = [PYTHON, "-m", "mcpeek", "stdio", "-w", str(self.capture), "-q", "--", *argv]
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0, cwd=ROOT
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.wfd = self.proc.stdin.fileno()
        self.rfd = self.proc.stdout.fileno()
        self.rbuf = bytearray()
        self.next_id = 1
        self.pairs = 0
        self.vm_hwm_kb = 0
        self.rss_samples: list[tuple[float, int]] = []  # (seconds into transfer, VmRSS kB)
        self._exit: Exit | None = None

    @property
    def pid(self) -> int:
        return self.proc.pid

    def server_pid(self) -> int | None:
        return child_pid(self.pid) if self.proxied else self.pid

    def relay_pid(self) -> int | None:
        return self.pid if self.proxied else None

    def write_all(self, data: bytes | memoryview) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self.wfd, view) :]

    def read_line(self) -> bytes:
        while True:
            nl = self.rbuf.find(b"\n")
            if nl >= 0:
                line = bytes(self.rbuf[: nl + 1])
                del self.rbuf[: nl + 1]
                return line
            chunk = os.read(self.rfd, READ_SIZE)
            if not chunk:
                raise RuntimeError("peer closed its stdout")
            self.rbuf += chunk

    def round_trip(self, size: int = SMALL) -> float:
        ident = self.next_id
        self.next_id += 1
        line = request(ident, size)
        t0 = time.perf_counter_ns()
        self.write_all(line)
        reply = self.read_line()
        elapsed = time.perf_counter_ns() - t0
        self.pairs += 1
        if len(reply) != len(line) or not reply.startswith(RESP_HEAD % ident):
            raise RuntimeError(f"bad reply to id {ident}: {reply[:80]!r}")
        return elapsed / 1e6  # ms

    def sample_memory(self, at: float | None = None) -> None:
        status = proc_status(self.pid)
        if "VmHWM" in status:
            self.vm_hwm_kb = max(self.vm_hwm_kb, status["VmHWM"])
            if at is not None:
                self.rss_samples.append((at, status["VmRSS"]))

    def pipelined(
        self, chunks: Iterable[bytes | memoryview], count: int, size: int
    ) -> tuple[float, Cpu]:
        """Write ``count`` requests of ``size`` bytes while reading the answers."""
        assert not self.rbuf
        first = self.next_id
        self.next_id += count
        expect_bytes = count * size
        state: dict[str, object] = {}
        done = threading.Event()

        def reader() -> None:
            lines = got = 0
            # the first HEAD bytes of the line being read and of the last complete one,
            # kept without copying whole chunks (1 MiB lines would make that costly)
            cur = last = b""
            try:
                while lines < count:
                    data = os.read(self.rfd, READ_SIZE)
                    if not data:
                        state["error"] = f"EOF after {lines} of {count} responses"
                        break
                    n = data.count(b"\n")
                    if n:
                        nl = data.rfind(b"\n")
                        if n == 1:
                            last = (cur + data[: min(nl, HEAD)])[:HEAD]
                        else:
                            prev = data.rfind(b"\n", 0, nl)
                            last = data[prev + 1 : min(nl, prev + 1 + HEAD)]
                        cur = data[nl + 1 : nl + 1 + HEAD]
                    elif len(cur) < HEAD:
                        cur += data[: HEAD - len(cur)]
                    lines += n
                    got += len(data)
                state["lines"], state["bytes"], state["tail"] = lines, got, last
            except OSError as exc:
                state["error"] = repr(exc)
            finally:
                state["t_end"] = time.perf_counter()
                done.set()

        def writer() -> None:
            try:
                for chunk in chunks:
                    self.write_all(chunk)
            except OSError as exc:
                state["error"] = f"writer: {exc!r}"
                done.set()

        relay_pid, server_pid = self.relay_pid(), self.server_pid()
        cpu0 = (time.process_time(), proc_cpu(relay_pid), proc_cpu(server_pid))
        rt = threading.Thread(target=reader, daemon=True)
        wt = threading.Thread(target=writer, daemon=True)
        t0 = time.perf_counter()
        rt.start()
        wt.start()
        next_sample = 0.0
        while not done.wait(0.02):
            # poll memory while traffic flows: VmHWM only ever grows
            if time.perf_counter() - t0 > TIMEOUT:
                state["error"] = f"timed out after {TIMEOUT}s"
                break
            now = time.perf_counter() - t0
            if now >= next_sample:
                next_sample = now + 0.5
                self.sample_memory(now)  # also keep a time-stamped VmRSS sample
            else:
                self.sample_memory()
        if "error" in state:
            self.kill()
            raise RuntimeError(f"pipelined transfer failed: {state['error']}")
        wt.join()
        t_end = state["t_end"]
        assert isinstance(t_end, float)
        cpu = Cpu(
            wall=t_end - t0,
            client=time.process_time() - cpu0[0],
            relay=_delta(proc_cpu(relay_pid), cpu0[1]),
            server=_delta(proc_cpu(server_pid), cpu0[2]),
        )
        if state["lines"] != count or state["bytes"] != expect_bytes:
            raise RuntimeError(
                f"expected {count} lines/{expect_bytes} bytes, got "
                f"{state['lines']}/{state['bytes']}"
            )
        last = state["tail"]
        assert isinstance(last, bytes)
        if not last.startswith(RESP_HEAD % (first + count - 1)):
            raise RuntimeError(f"last response is not for id {first + count - 1}: {last[:60]!r}")
        self.pairs += count
        self.sample_memory()
        return t_end - t0, cpu

    def finish(self) -> Exit:
        """Close stdin, drain stdout, and wait, polling VmHWM to the end."""
        self.proc.stdin.close()  # type: ignore[union-attr]
        rest = b""
        # the peer answers nothing more; anything left is a protocol error
        while True:
            self.sample_memory()
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                break
            time.sleep(0.005)
        try:
            while chunk := os.read(self.rfd, READ_SIZE):
                rest += chunk
        except OSError:
            pass
        self.proc.stdout.close()  # type: ignore[union-attr]
        self.proc.returncode = os.waitstatus_to_exitcode(status)
        if rest or self.rbuf:
            raise RuntimeError(f"unexpected trailing output: {(bytes(self.rbuf) + rest)[:80]!r}")
        result = Exit(self.proc.returncode, self.vm_hwm_kb)
        if self.capture is not None:
            result.capture = check_capture(self.capture, self.pairs)
            self.capture.unlink()
        self._exit = result
        return result

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def _delta(after: float | None, before: float | None) -> float | None:
    return None if after is None or before is None else after - before


# -- the measurements ----------------------------------------------------------------


@dataclass
class Side:
    value: float
    cpu: Cpu | None = None
    exit: Exit | None = None
    extra: dict[str, float] = field(default_factory=dict)


def run_pipelined(
    proxied: bool,
    workdir: Path,
    label: str,
    make_chunks: Callable[[int], Iterable[bytes | memoryview]],
    count: int,
    size: int,
) -> tuple[float, Cpu, Exit]:
    conn = Connection(proxied, workdir, label)
    try:
        conn.round_trip()  # warm-up: the peer is up and answering
        chunks = make_chunks(conn.next_id)
        seconds, cpu = conn.pipelined(chunks, count, size)
        return seconds, cpu, conn.finish()
    except BaseException:
        conn.kill()
        raise


def measure_throughput(proxied: bool, workdir: Path, n: int) -> Side:
    label = "throughput-proxied" if proxied else "throughput-direct"

    def chunks(first: int) -> Iterable[bytes | memoryview]:
        # the whole request stream is built before the clock starts
        return list(slices(b"".join(small_batches(first, n))))

    seconds, cpu, ex = run_pipelined(proxied, workdir, label, chunks, n, SMALL)
    return Side(n / seconds, cpu, ex)


def measure_big(
    proxied: bool, workdir: Path, n: int, size: int = BIG, base64: bool = False
) -> Side:
    label = "big-proxied" if proxied else "big-direct"
    seconds, cpu, ex = run_pipelined(
        proxied,
        workdir,
        label,
        # Base64 lines are made before the clock starts; the others as they are written.
        lambda first: (
            list(big_messages(first, n, size, True)) if base64 else big_messages(first, n, size)
        ),
        n,
        size,
    )
    return Side(n * size / seconds / 1e6, cpu, ex)


def measure_latency(proxied: bool, workdir: Path, n: int) -> Side:
    conn = Connection(proxied, workdir, "latency-proxied" if proxied else "latency-direct")
    try:
        for _ in range(max(50, n // 20)):  # warm-up, not counted
            conn.round_trip()
        samples = sorted(conn.round_trip() for _ in range(n))
        ex = conn.finish()
    except BaseException:
        conn.kill()
        raise
    p50 = statistics.median(samples)
    p99 = samples[min(len(samples) - 1, round(0.99 * (len(samples) - 1)))]
    return Side(p50, None, ex, {"p50": p50, "p99": p99, "mean": statistics.fmean(samples)})


def measure_rss(workdir: Path, n: int) -> tuple[Side, Connection]:
    conn = Connection(True, workdir, "rss")
    try:
        conn.round_trip()
        conn.sample_memory()
        start_rss = proc_status(conn.pid).get("VmRSS", 0)
        first = conn.next_id
        seconds, cpu = conn.pipelined(small_batches(first, n), n, SMALL)
        ex = conn.finish()
    except BaseException:
        conn.kill()
        raise
    side = Side(
        ex.vm_hwm_kb / 1024, cpu, ex, {"start_rss_mb": start_rss / 1024, "rate": n / seconds}
    )
    return side, conn


def huge_lines(mib: int, n: int, base64: bool = False) -> int:
    """[5] ``n`` single-line messages of ``mib`` MiB each way: time and peak RSS."""
    size = mib << 20
    what = "standard Base64" if base64 else '"x"'
    say(
        f"\n[5] pipelined {mib} MiB single-line messages ({what} inside), {n} requests "
        "(+ as many responses)"
    )
    sides = {}
    with tempfile.TemporaryDirectory(prefix="mcpeek-bench-") as tmp:
        for proxied in (False, True):
            side = sides[proxied] = measure_big(proxied, Path(tmp), n, size, base64)
            name = "proxied" if proxied else "direct "
            say(f"  {name}: {side.value:8.1f} MB/s   {side.cpu.describe() if side.cpu else ''}")
            say(f"           {exit_line(side.exit)}")
    ratio = sides[False].value / sides[True].value
    hwm = sides[True].exit.vm_hwm_kb / 1024 if sides[True].exit else 0.0
    say(
        f"  time proxied/direct: {ratio:.1f}x; mcpeek peak RSS {hwm:.1f} MB "
        f"(target 60 + 3 x {mib} = {60 + 3 * mib} MB)"
    )
    return 0


# -- reporting -----------------------------------------------------------------------


def say(text: str = "") -> None:
    print(text, flush=True)


def exit_line(ex: Exit | None) -> str:
    if ex is None:
        return ""
    text = f"exit {ex.code}, peak RSS {ex.vm_hwm_kb / 1024:.1f} MB"
    if ex.capture is not None:
        text += "; " + ex.capture.describe()
    return text


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller counts (a quick look)")
    parser.add_argument(
        "--huge",
        type=int,
        default=16,
        metavar="MIB",
        help="also relay a few single-line messages of this many MiB (0: not)",
    )
    parser.add_argument("--only-huge", action="store_true", help="measure only the huge lines")
    parser.add_argument(
        "--base64",
        action="store_true",
        help="the huge lines hold standard Base64 (an image's), not a run of one letter",
    )
    args = parser.parse_args()
    if args.only_huge:
        return huge_lines(args.huge, 4 if args.quick else 8, args.base64)
    quick = args.quick
    n_small = 20_000 if quick else 200_000
    n_rtt = 1_000 if quick else 5_000
    n_big = 30 if quick else 200
    n_rss = 100_000 if quick else 1_000_000

    say(f"mcpeek stdio relay benchmark{' (--quick)' if quick else ''}")
    say(f"python {sys.version.split()[0]} at {PYTHON}; {os.cpu_count()} CPUs")
    say(f"direct:  client <-> {ECHO_SERVER.name}")
    say(f"proxied: client <-> python -m mcpeek stdio -w <tmp> -q -- python {ECHO_SERVER.name}")
    started = time.perf_counter()
    integrity: list[CaptureCheck] = []

    with tempfile.TemporaryDirectory(prefix="mcpeek-bench-") as tmp:
        workdir = Path(tmp)

        say(f"\n[1] pipelined throughput, {n_small} x {SMALL}-byte requests (+ as many responses)")
        thr = {}
        for proxied in (False, True):
            side = measure_throughput(proxied, workdir, n_small)
            thr[proxied] = side
            name = "proxied" if proxied else "direct "
            say(
                f"  {name}: {side.value:10,.0f} pairs/s  ({2 * side.value:,.0f} msgs/s)   "
                f"{side.cpu.describe() if side.cpu else ''}"
            )
            say(f"           {exit_line(side.exit)}")
            if side.exit and side.exit.capture:
                integrity.append(side.exit.capture)
        thr_ratio = thr[True].value / thr[False].value
        say(f"  ratio proxied/direct: {thr_ratio:.2f}")
        proxied_cpu = thr[True].cpu
        relay_cpu = proxied_cpu.relay if proxied_cpu else None
        if relay_cpu:
            say(
                f"  mcpeek CPU per pair: {relay_cpu / n_small * 1e6:.1f} us "
                f"(i.e. {relay_cpu / (2 * n_small) * 1e6:.1f} us per message relayed+recorded)"
            )

        say(f"\n[2] sequential round-trip latency, {n_rtt} round trips of {SMALL} bytes")
        lat = {}
        for proxied in (False, True):
            side = measure_latency(proxied, workdir, n_rtt)
            lat[proxied] = side
            name = "proxied" if proxied else "direct "
            say(
                f"  {name}: p50 {side.extra['p50']:.3f} ms  p99 {side.extra['p99']:.3f} ms  "
                f"mean {side.extra['mean']:.3f} ms"
            )
            say(f"           {exit_line(side.exit)}")
            if side.exit and side.exit.capture:
                integrity.append(side.exit.capture)
        add_p50 = lat[True].extra["p50"] - lat[False].extra["p50"]
        add_p99 = lat[True].extra["p99"] - lat[False].extra["p99"]
        say(f"  added by mcpeek: p50 {add_p50:+.3f} ms, p99 {add_p99:+.3f} ms")

        say(
            f"\n[3] pipelined 1 MiB single-line messages, {n_big} requests "
            "(MB/s = request bytes / s; each is echoed back)"
        )
        big = {}
        for proxied in (False, True):
            side = measure_big(proxied, workdir, n_big)
            big[proxied] = side
            name = "proxied" if proxied else "direct "
            say(f"  {name}: {side.value:8.1f} MB/s   {side.cpu.describe() if side.cpu else ''}")
            say(f"           {exit_line(side.exit)}")
            if side.exit and side.exit.capture:
                integrity.append(side.exit.capture)
        big_ratio = big[True].value / big[False].value
        say(f"  ratio proxied/direct: {big_ratio:.2f}")

        say(
            f"\n[4] mcpeek peak RSS, {n_rss} x {SMALL}-byte request/response pairs "
            f"({2 * n_rss} messages relayed)"
        )
        rss, rss_conn = measure_rss(workdir, n_rss)
        ex = rss.exit
        assert ex is not None
        say(
            f"  mcpeek RSS after start-up {rss.extra['start_rss_mb']:.1f} MB; "
            f"peak (VmHWM, polled until exit) {rss.value:.1f} MB"
        )
        samples = rss_conn.rss_samples
        if samples:
            shown = samples if len(samples) <= 8 else samples[:: max(1, len(samples) // 8)]
            say(
                "  VmRSS while relaying (s: MB): "
                + ", ".join(f"{t:.1f}: {kb / 1024:.1f}" for t, kb in shown)
            )
        say(f"  rate {rss.extra['rate']:,.0f} pairs/s   {rss.cpu.describe() if rss.cpu else ''}")
        say(f"  {exit_line(ex)}")
        if ex.capture:
            integrity.append(ex.capture)

    all_ok = all(c.ok for c in integrity)
    total_pairs = sum(c.expected_pairs for c in integrity)
    total_msgs = sum(c.msgs for c in integrity)
    rows = [
        (
            "throughput 100 B, proxied/direct",
            f"{thr_ratio:.2f}x",
            f">= {TARGETS['throughput']}x",
            thr_ratio >= TARGETS["throughput"],
        ),
        (
            "added p50 latency",
            f"{add_p50:.3f} ms",
            f"<= {TARGETS['p50_added_ms']} ms",
            add_p50 <= TARGETS["p50_added_ms"],
        ),
        ("added p99 latency", f"{add_p99:.3f} ms", "(info)", None),
        (
            "throughput 1 MiB, proxied/direct",
            f"{big_ratio:.2f}x",
            f">= {TARGETS['big_ratio']}x",
            big_ratio >= TARGETS["big_ratio"],
        ),
        (
            f"peak RSS after {n_rss // 1000}k pairs",
            f"{rss.value:.1f} MB",
            f"<= {TARGETS['rss_mb']:.0f} MB",
            rss.value <= TARGETS["rss_mb"],
        ),
        ("capture records", f"{total_msgs}/{2 * total_pairs}", "all", all_ok),
    ]
    say("\nsummary")
    w0 = max(len(r[0]) for r in rows)
    w1 = max(len(r[1]) for r in rows)
    w2 = max(len(r[2]) for r in rows)
    say(f"  {'figure':<{w0}}  {'value':>{w1}}  {'target':<{w2}}  result")
    for name, value, target, ok in rows:
        verdict = "-" if ok is None else ("PASS" if ok else "MISS")
        say(f"  {name:<{w0}}  {value:>{w1}}  {target:<{w2}}  {verdict}")
    say(
        f"  direct: {thr[False].value:,.0f} pairs/s, p50 {lat[False].extra['p50']:.3f} ms, "
        f"{big[False].value:.0f} MB/s;  proxied: {thr[True].value:,.0f} pairs/s, "
        f"p50 {lat[True].extra['p50']:.3f} ms, {big[True].value:.0f} MB/s"
    )
    say(f"  total time {time.perf_counter() - started:.1f} s")
    if args.huge:
        huge_lines(args.huge, 4 if quick else 8, args.base64)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
