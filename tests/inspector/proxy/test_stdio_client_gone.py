"""mcpeek never outlives its client: when the client dies, the server learns it as it
would without mcpeek (EOF on stdin, EPIPE on stdout and stderr), and all exit.

The client here is this test: it owns the three pipes, and "dies" by closing
its ends of them, which is what the kernel does for a SIGKILLed client. The
servers ignore SIGTERM and mcpeek's grace is long, so only the broken pipes
can end them within the test's timeout.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from mcpeek.inspector.capture import read_records
from mcpeek.inspector.records import Event
from mcpeek.inspector.testing.wire import stream_bytes
from tests.conftest import mcpeek_argv

pytestmark = pytest.mark.e2e

EPIPE_EXIT = 3  # what the servers below exit with once a pipe is broken
LONG_GRACE = "600"  # far beyond the test's timeout: escalation cannot be what ends them
_SERVER_PRELUDE = f"""
import os, signal, sys
signal.signal(signal.SIGTERM, signal.SIG_IGN)
def write(fd, data):
    try:
        while data:
            data = data[os.write(fd, data):]
    except BrokenPipeError:
        os._exit({EPIPE_EXIT})
LOG = b"server log line " + b"x" * 100 + b"\\n"
"""
# Answers one request, then logs a megabyte to a stderr nobody reads.
LOGGING_SERVER = (
    _SERVER_PRELUDE
    + """
sys.stdin.buffer.readline()
write(1, b'{"jsonrpc":"2.0","id":1,"result":{}}\\n')
for _ in range(10_000):
    write(2, LOG)
while sys.stdin.buffer.readline():
    pass
"""
)
# Floods stdout and stderr alike, forever.
FLOODING_SERVER = (
    _SERVER_PRELUDE
    + """
NOTE = b'{"jsonrpc":"2.0","method":"notifications/message","params":{"p":"'
NOTE += b"y" * 1000 + b'"}}\\n'
while True:
    write(2, LOG)
    write(1, NOTE)
"""
)
PING = b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n'


@contextlib.contextmanager
def started(capture: Path, server: str) -> Iterator[subprocess.Popen[bytes]]:
    """mcpeek in front of ``server``; whatever the test's outcome, neither survives it."""
    proc = subprocess.Popen(
        mcpeek_argv(
            "stdio", "--grace", LONG_GRACE, "-w", str(capture), "--", sys.executable, "-c", server
        ),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        yield proc
    finally:
        proc.kill()
        proc.wait()
        for pid in spawned(capture):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def spawned(capture: Path) -> list[int]:
    try:
        records = read_records(capture)[1]
    except Exception:
        return []
    return [r.pid for r in records if isinstance(r, Event) and r.event == "spawn" and r.pid]


def wait_until_stalled(capture: Path) -> None:
    """Until mcpeek has stopped reading the server: it has filled our unread pipes and
    its own buffers (the server's stderr more than 64 KiB), and the capture stops growing."""
    deadline = time.monotonic() + 60
    seen = (-1, -1)
    while time.monotonic() < deadline:
        time.sleep(1.0)
        try:
            records = read_records(capture)[1]
        except Exception:
            continue  # the capture is still being written
        now = (len(stream_bytes(records, "s2c")), len(stream_bytes(records, "stderr")))
        if now == seen and now[1] > 64 * 1024:
            return
        seen = now
    raise AssertionError(f"mcpeek kept reading the server: {seen} bytes relayed")


def die(client_side: subprocess.Popen[bytes]) -> None:
    for pipe in (client_side.stdin, client_side.stdout, client_side.stderr):
        assert pipe is not None
        pipe.close()


def notes(capture: Path) -> list[str]:
    return [r.message or "" for r in read_records(capture)[1] if isinstance(r, Event)]


def test_a_client_that_never_read_stderr_dies_and_the_logging_server_exits(
    capture_path: Path,
) -> None:
    with started(capture_path, LOGGING_SERVER) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(PING)
        proc.stdin.flush()
        assert proc.stdout.readline().startswith(b'{"jsonrpc":"2.0","id":1')
        wait_until_stalled(capture_path)
        die(proc)
        assert proc.wait(timeout=60) == EPIPE_EXIT  # the server's own ending, passed on
    assert "sending SIGTERM to the server" not in notes(capture_path)


def test_a_client_that_stopped_reading_dies_and_the_flooding_server_exits(
    capture_path: Path,
) -> None:
    with started(capture_path, FLOODING_SERVER) as proc:
        assert proc.stdout is not None
        proc.stdout.readline()
        wait_until_stalled(capture_path)
        die(proc)
        assert proc.wait(timeout=60) == EPIPE_EXIT
    assert "sending SIGTERM to the server" not in notes(capture_path)
