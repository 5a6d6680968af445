"""``mcpeek http`` as a process: usage errors, the printed URL, a relayed call, Ctrl-C."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from mcpeek.inspector.capture import read_records
from mcpeek.inspector.capture.redact_rules import marker
from mcpeek.inspector.records import Event, Msg
from tests.conftest import mcpeek_argv


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--upstream", "http://127.0.0.1:1/mcp", "--listen", "0.0.0.0:0"], "not a loopback"),
        (["--upstream", "ftp://x/mcp"], "expected an http:// or https:// URL"),
        (["--upstream", "http://[::1/mcp"], "--upstream 'http://[::1/mcp' is not a valid URL"),
        (["--upstream", "http://127.0.0.1:99999/mcp"], "is not a valid URL: Port out of range"),
        (["--upstream", "http:///mcp"], "names no host"),
        (["--upstream", "http://127.0.0.1:0/mcp"], "port 0 is no server's port"),
        (["--upstream", "http://127.0.0.1:1/mcp", "--listen", "127.0.0.1:99999"], "port"),
        (["--upstream", "http://127.0.0.1:1/mcp", "--header-timeout", "0"], "--header-timeout"),
        (["--upstream", "http://a:s3cret@[::1/mcp"], "'http://a:<redacted>@[::1/mcp' is not"),
    ],
)
def test_usage_errors(argv: list[str], message: str, tmp_path: Path) -> None:
    proc = subprocess.run(
        mcpeek_argv("http", "-w", str(tmp_path / "c.jsonl"), *argv),
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode == 2
    assert message in proc.stderr and "Traceback" not in proc.stderr


class _Upstream(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        request = json.loads(body)
        answer = json.dumps(
            {"jsonrpc": "2.0", "id": request["id"], "result": {"tools": []}}
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args: object) -> None:
        pass


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_proxy_process_relays_and_saves_a_capture(tmp_path: Path) -> None:
    upstream = ThreadingHTTPServer(("127.0.0.1", 0), _Upstream)
    threading.Thread(target=upstream.serve_forever, daemon=True).start()
    port = free_port()
    capture = tmp_path / "c.jsonl"
    proc = subprocess.Popen(
        mcpeek_argv(
            "http",
            "--upstream",
            f"http://127.0.0.1:{upstream.server_port}/mcp",
            "--listen",
            f"127.0.0.1:{port}",
            "-w",
            str(capture),
        ),
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        first = proc.stderr.readline()
        assert first.strip() == (
            f"mcpeek: proxying http://127.0.0.1:{port}/mcp -> "
            f"http://127.0.0.1:{upstream.server_port}/mcp"
        )
        # where, from the start (read here: communicate() below would miss a line the
        # text stream had already buffered)
        assert proc.stderr.readline() == f"mcpeek: recording to {capture}\n"
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).encode()
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/mcp", data=body, headers={"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            assert json.loads(response.read())["id"] == 1
        time.sleep(0.2)
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=20)
        upstream.shutdown()
    assert proc.returncode == 0
    assert "tools/list  id 1  ← complete" in err  # one line per flow on stderr
    header, records, problems = read_records(capture)
    assert header.transport == "http" and problems == []
    assert [r.dir for r in records if isinstance(r, Msg)] == ["c2s", "s2c"]
    assert any(isinstance(r, Event) and r.event == "listen" for r in records)


class _SlowSse(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        try:
            for _ in range(100):
                self.wfile.write(b"9\r\n: ping\n\n\n\r\n")
                self.wfile.flush()
                time.sleep(0.1)
        except OSError:
            pass

    def log_message(self, *args: object) -> None:
        pass


def test_ctrl_c_with_an_open_stream_ends_it_in_the_capture(tmp_path: Path) -> None:
    upstream = ThreadingHTTPServer(("127.0.0.1", 0), _SlowSse)
    threading.Thread(target=upstream.serve_forever, daemon=True).start()
    port = free_port()
    capture = tmp_path / "c.jsonl"
    proc = subprocess.Popen(
        mcpeek_argv(
            "http",
            "--upstream",
            f"http://127.0.0.1:{upstream.server_port}/mcp",
            "--listen",
            f"127.0.0.1:{port}",
            "-w",
            str(capture),
        ),
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        proc.stderr.readline()  # listening
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen"}).encode()
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/mcp", data=body, headers={"Content-Type": "application/json"}
        )
        stream = urllib.request.urlopen(request, timeout=10)
        assert stream.read(6) == b": ping"
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=20)
        stream.close()
    finally:
        upstream.shutdown()
    assert proc.returncode == 0 and "Traceback" not in err
    _, records, _ = read_records(capture)
    ends = [r for r in records if getattr(r, "phase", None) == "end"]
    assert [e.reason for e in ends] == ["client-closed"]


class _Credentials(_Upstream):
    def do_POST(self) -> None:
        self.server.authorizations.append(self.headers.get("Authorization"))  # type: ignore[attr-defined]
        super().do_POST()


def test_upstream_password_is_used_but_never_shown(tmp_path: Path) -> None:
    """#21.4: the password of ``--upstream http://user:PW@host`` goes upstream as Basic
    credentials; it appears neither on stderr nor in the capture's header. Nor does a
    key in its query (a hosted server's ``?api_key=``)."""
    upstream = ThreadingHTTPServer(("127.0.0.1", 0), _Credentials)
    authorizations: list[str | None] = []
    upstream.authorizations = authorizations  # type: ignore[attr-defined]
    threading.Thread(target=upstream.serve_forever, daemon=True).start()
    port = free_port()
    capture = tmp_path / "c.jsonl"
    target = f"http://alice:s3cret@127.0.0.1:{upstream.server_port}/mcp?api_key=k3y-v4lue"
    proc = subprocess.Popen(
        mcpeek_argv(
            "http", "--upstream", target, "--listen", f"127.0.0.1:{port}", "-w", str(capture)
        ),
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        first = proc.stderr.readline()
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).encode()
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/mcp", data=body, headers={"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            assert json.loads(response.read())["id"] == 1
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=20)
        upstream.shutdown()
    assert "alice:<redacted>@127.0.0.1" in first
    assert authorizations == ["Basic YWxpY2U6czNjcmV0"]  # alice:s3cret
    assert "s3cret" not in first + err and "k3y-v4lue" not in first + err
    assert "s3cret" not in capture.read_text() and "k3y-v4lue" not in capture.read_text()
    header, _, _ = read_records(capture)
    assert header.target == (
        f"http://alice:<redacted>@127.0.0.1:{upstream.server_port}/mcp"
        f"?api_key={marker('k3y-v4lue')}"
    )


def test_quiet_proxy_prints_no_aiohttp_traceback(tmp_path: Path) -> None:
    """#21.12: aiohttp logs a malformed request with a traceback; mcpeek says it in one line."""
    port = free_port()
    proc = subprocess.Popen(
        mcpeek_argv(
            "http",
            "-q",
            "--upstream",
            "http://127.0.0.1:1/mcp",
            "--listen",
            f"127.0.0.1:{port}",
            "-w",
            str(tmp_path / "c.jsonl"),
        ),
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        for _ in range(200):  # quiet: no line says it listens
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.05)
        with socket.create_connection(("127.0.0.1", port), timeout=10) as client:
            client.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: x\r\n\r\n")
            answer = client.recv(4096)
        assert b" 400 " in answer.split(b"\r\n", 1)[0]
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=20)
    assert proc.returncode == 0
    assert "Traceback" not in err
    assert all(line.startswith("mcpeek: ") for line in err.splitlines()), err
