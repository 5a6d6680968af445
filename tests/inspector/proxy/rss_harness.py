"""A proxy in a process of its own, and its memory as ``/proc`` tells it (for
:mod:`.test_peak_rss` and :mod:`.test_rss_streams`: memory, never time)."""

from __future__ import annotations

import contextlib
import json
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from tests.conftest import mcpeek_argv, needs

WAIT_S = 120.0  # a bound on waiting for the capture, not a timing assertion
PAD = b"y"

# Reads lines and writes each back: the server end of the stdio tests.
ECHO = (
    "import sys\n"
    "out = sys.stdout.buffer\n"
    "for line in sys.stdin.buffer:\n"
    "    out.write(line)\n"
    "    out.flush()\n"
)


def message(ident: int, key: str, size: int) -> bytes:
    """A JSON-RPC message of exactly ``size`` bytes (a long string inside)."""
    head = b'{"jsonrpc":"2.0","id":%d,"%s":{"pad":"' % (ident, key.encode())
    tail = b'"}}'
    return head + PAD * (size - len(head) - len(tail)) + tail


def peak_rss_mb(pid: int) -> float:
    """The process's peak resident memory so far (VmHWM), in MB."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    raise AssertionError(f"no VmHWM for process {pid}")


def wait_for(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(0.02)


def complete_lines(capture: Path) -> int:
    """How many whole lines the capture holds (the header included)."""
    with open(capture, "rb") as f:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 20), b""))


def resident_mb(pid: int) -> float:
    """The process's resident memory now (VmRSS), in MB."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise AssertionError(f"no VmRSS for process {pid}")


def listening_port(capture: Path, proc: subprocess.Popen[bytes]) -> int:
    """The port mcpeek took (--listen :0), from its capture's ``listen`` event."""
    found: list[int] = []

    def listening() -> bool:
        assert proc.poll() is None, "mcpeek http exited at start-up"
        if capture.exists():
            for line in capture.read_bytes().splitlines():
                if b'"event":"listen"' in line:
                    found.append(int(json.loads(line)["addr"].rsplit(":", 1)[1]))
                    return True
        return False

    wait_for(listening, "mcpeek http to listen")
    return found[0]


def on_linux() -> None:
    needs(sys.platform.startswith("linux"), "Linux (/proc/PID/status)")


@contextlib.contextmanager
def http_proxy(
    upstream_handler: type[BaseHTTPRequestHandler], capture: Path
) -> Iterator[tuple[subprocess.Popen[bytes], int]]:
    """``mcpeek http`` (live checks off: the proxy's own memory) recording to
    ``capture``, in front of an upstream answered by ``upstream_handler``; yields the
    proxy's process and port, and stops both (SIGINT) after."""
    on_linux()
    upstream = ThreadingHTTPServer(("127.0.0.1", 0), upstream_handler)
    threading.Thread(target=upstream.serve_forever, daemon=True).start()
    target = f"http://127.0.0.1:{upstream.server_port}/mcp"
    argv = ["http", "--upstream", target, "--listen", "127.0.0.1:0", "-w", str(capture)]
    proc = subprocess.Popen(mcpeek_argv(*argv, "-q", "--no-check"), stderr=subprocess.DEVNULL)
    try:
        yield proc, listening_port(capture, proc)
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)
        upstream.shutdown()


@contextlib.contextmanager
def stdio_proxy(capture: Path) -> Iterator[subprocess.Popen[bytes]]:
    """``mcpeek stdio`` (live checks off) around a line echo server, recording to
    ``capture``; its stdin closed and its exit awaited after."""
    on_linux()
    argv = ["stdio", "-w", str(capture), "-q", "--no-check", "--", sys.executable, "-c", ECHO]
    proc = subprocess.Popen(mcpeek_argv(*argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        yield proc
    finally:
        proc.stdin.close()
        proc.wait(timeout=60)
        proc.stdout.close()
