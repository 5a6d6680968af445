"""What a capture keeps when the proxy dies or the disk fills: each record reaches the
kernel right after its chunk was forwarded, so SIGKILL loses at most the record in
flight; a write error is said once, and the run does not end as if all was saved."""

from __future__ import annotations

import compileall
import http.client
import json
import resource
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from mcpeek.inspector.capture import read_records
from mcpeek.inspector.records import Msg
from tests.conftest import mcpeek_argv

pytestmark = pytest.mark.e2e

ECHO = [sys.executable, "-c", "import sys\nfor line in sys.stdin: print(line, end='', flush=True)"]
REQUESTS = 300
ROUND_TRIPS = 20


def request(n: int) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": n, "method": "ping"}).encode() + b"\n"


def answered_ids(path: Path) -> set[int]:
    _, records, _ = read_records(path)
    return {json.loads(r.raw)["id"] for r in records if isinstance(r, Msg) and r.dir == "s2c"}


def test_sigkill_on_stdio_loses_nothing_the_client_got(tmp_path: Path) -> None:
    capture = tmp_path / "cap.jsonl"
    proxy = subprocess.Popen(
        mcpeek_argv("stdio", "-q", "--no-check", "-w", str(capture), "--", *ECHO),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    try:
        assert proxy.stdin is not None and proxy.stdout is not None
        proxy.stdin.write(b"".join(request(n) for n in range(REQUESTS)))  # a burst
        proxy.stdin.flush()
        got = [json.loads(proxy.stdout.readline())["id"] for _ in range(REQUESTS)]
        assert got == list(range(REQUESTS))
        # Then one round trip at a time: an answer leaves mcpeek only after every
        # earlier chunk was written to the file (each record is written right after
        # its chunk is forwarded), so the file holds it all before any kill.
        for n in range(REQUESTS, REQUESTS + ROUND_TRIPS):
            proxy.stdin.write(request(n))
            proxy.stdin.flush()
            assert json.loads(proxy.stdout.readline())["id"] == n
            assert answered_ids(capture) >= set(range(n))
    finally:
        proxy.send_signal(signal.SIGKILL)
        proxy.wait()
    assert answered_ids(capture) >= set(range(REQUESTS + ROUND_TRIPS - 1))


class _Echo(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        answer = json.dumps({"jsonrpc": "2.0", "id": json.loads(body)["id"], "result": {}})
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer.encode())

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def upstream() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Echo)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/mcp"
    finally:
        server.shutdown()


def start_http_proxy(
    upstream: str, capture: Path, *, checks: bool = False, **popen: object
) -> tuple[subprocess.Popen[str], int]:
    proxy = subprocess.Popen(  # type: ignore[call-overload]
        mcpeek_argv(
            "http",
            "--upstream",
            upstream,
            "--listen",
            "127.0.0.1:0",
            *([] if checks else ["--no-check"]),
            "--no-tui",
            "-w",
            str(capture),
        ),
        stdin=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        **popen,
    )
    assert proxy.stderr is not None
    line = proxy.stderr.readline()  # mcpeek: proxying http://127.0.0.1:PORT/mcp -> …
    assert line.startswith("mcpeek: proxying "), line
    port = int(line.split()[2].rsplit(":", 1)[1].split("/")[0])
    return proxy, port


def post(connection: http.client.HTTPConnection, n: int, padding: str = "") -> int:
    body = json.dumps({"jsonrpc": "2.0", "id": n, "method": "ping", "params": {"p": padding}})
    connection.request("POST", "/mcp", body, {"Content-Type": "application/json"})
    response = connection.getresponse()
    return int(json.loads(response.read())["id"])


def test_sigkill_on_http_loses_nothing_the_client_got(tmp_path: Path, upstream: str) -> None:
    capture = tmp_path / "cap.jsonl"
    proxy, port = start_http_proxy(upstream, capture)
    try:
        # One keep-alive connection: a request is handled only once the one before
        # it is done, its records written.
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        for n in range(ROUND_TRIPS):
            assert post(connection, n) == n
            assert answered_ids(capture) >= set(range(n))  # already in the file
        connection.close()
    finally:
        proxy.send_signal(signal.SIGKILL)
        proxy.communicate()
    assert answered_ids(capture) >= set(range(ROUND_TRIPS - 1))


def fresh_bytecode() -> None:
    """Compile mcpeek before a run under RLIMIT_FSIZE: a module edited since its last
    import would get its .pyc written there, cut short (a write past the limit is
    short, not an error), and every later import of it would fail."""
    source = Path(__file__).resolve().parents[3]
    for package in ("inspector", "rules"):
        compileall.compile_dir(source / package, quiet=1)


def test_a_full_disk_on_http_is_said_once_and_fails_the_run(tmp_path: Path, upstream: str) -> None:
    capture = tmp_path / "cap.jsonl"
    # A full disk, honestly: the file may not grow past 8 KiB (RLIMIT_FSIZE; Python
    # ignores SIGXFSZ, so writes fail with EFBIG as they would with ENOSPC).
    limit = 8192
    fresh_bytecode()
    proxy, port = start_http_proxy(
        upstream,
        capture,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit)),
    )
    try:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        for n in range(30):  # ~30 KiB of records: the limit is met early
            assert post(connection, n, "x" * 500) == n  # the traffic still flows
        connection.close()
    finally:
        proxy.send_signal(signal.SIGINT)
        _, err = proxy.communicate(timeout=30)
    assert proxy.returncode == 2
    assert "Traceback" not in err
    assert err.count("File too large") == 1, err  # once, not per record
    assert f"the capture {capture} is incomplete" in err
    assert "capture saved" not in err
    assert capture.stat().st_size <= limit


def test_after_a_full_disk_the_live_checks_blame_no_server(tmp_path: Path, upstream: str) -> None:
    """Every request was answered; the capture holds only some answers. The live checks
    (on here) must not call the others unanswered: the file lacks them, the client not."""
    capture = tmp_path / "cap.jsonl"
    limit = 8192
    fresh_bytecode()
    proxy, port = start_http_proxy(
        upstream,
        capture,
        checks=True,  # and flow lines: --no-tui prints one per flow
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit)),
    )
    try:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        for n in range(30):
            assert post(connection, n, "x" * 500) == n
        connection.close()
    finally:
        proxy.send_signal(signal.SIGINT)
        _, err = proxy.communicate(timeout=60)
    assert "Traceback" not in err
    assert "File too large" in err
    assert "request.unanswered" not in err
    assert "unanswered" not in err  # nor a flow line ending so
