"""``mcpeek replay`` on the command line: exit codes, options, the raw MRTR peer."""

from __future__ import annotations

import contextlib
import http.server
import json
import socket
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from mcpeek.inspector.cli.main import main
from mcpeek.inspector.testing.records import RecordBuilder
from tests.conftest import peer_argv


def weather_capture(path: Path) -> Path:
    b = RecordBuilder()
    b.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}}, id=1)
    b.result(1, {"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {}})
    return b.save(path)


# A server that closes its stdin and keeps running: mcpeek has to stop it.
IGNORES_STDIN = "import os, time; os.close(0); time.sleep(60)"

# A stdio server that answers its first N requests, then exits with CODE.
DIES_AFTER = """
import json, sys
n, code = int(sys.argv[1]), int(sys.argv[2])
for i, line in enumerate(sys.stdin):
    if i >= n:
        sys.exit(code)
    m = json.loads(line)
    if "id" in m and "method" in m:
        print(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": {"ok": True}}), flush=True)
sys.exit(code)
"""

Answer = tuple[int, str, bytes]  # status, content type, body


@contextlib.contextmanager
def http_server(answer: Callable[[dict[str, Any]], Answer]) -> Iterator[str]:
    """A tiny HTTP endpoint on a free loopback port, answering each POSTed message."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            message = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            status, kind, body = answer(message)
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["replay", "{cap}"], "replay needs one server"),
        (["replay", "{cap}", "--url", ""], "--url is empty"),
        (["replay", "{cap}", "--url", "http://x/", "--", "true"], "both were given"),
        (["replay", "{cap}", "--url", "ftp://x/"], "--url 'ftp://x/': expected an http"),
        (["replay", "{cap}", "--url", "http://[::1/mcp"], "is not a valid URL"),
        (["replay", "{cap}", "--url", "http://x:port/mcp"], "is not a valid URL"),
        (["replay", "{cap}", "--url", "http:///mcp"], "names no host"),
        (["replay", "{cap}", "--ignore", "result", "--", "true"], "--ignore: JSON Pointer"),
        (["replay", "{cap}", "--timeout", "0", "--", "true"], "--timeout must be a positive"),
        (["replay", "{cap}", "-H", "nocolon", "--url", "http://x/"], "--header must look like"),
        # Regression: a header aiohttp refuses was only found out when sending it.
        (["replay", "{cap}", "-H", "X: a\nB: c", "--url", "{http_error}"], "control character"),
        (["replay", "{cap}", "-H", "X: a\r", "--url", "{http_error}"], "control character"),
        (["replay", "{cap}", "-H", "X: a\x00b", "--", "true"], "control character"),
        (["replay", "{cap}", "-H", "X Y: v", "--url", "{http_error}"], "not a valid header name"),
        (["replay", "{cap}", "-H", "X\n: v", "--url", "{http_error}"], "not a valid header name"),
        (["replay", "{dir}/missing.jsonl", "--", "true"], "no such file"),
        (["replay", "{cap}", "--", "{dir}/no-such-server"], "cannot start the server"),
        (["replay", "{cap}", "--", "false"], "the server exited (code 1) before answering"),
        (
            ["replay", "{cap2}", "--timeout", "1", "--", sys.executable, "-c", IGNORES_STDIN],
            "the server closed its stdin before answering anything; mcpeek stopped it",
        ),
        (["replay", "{cap}", "--url", "{http_error}/mcp"], "not an MCP endpoint"),
        (["replay", "{cap}", "--url", "http://127.0.0.1:{port}/mcp"], "cannot reach"),
    ],
)
def test_usage_errors_and_unreachable_servers_exit_2_with_one_line(
    argv: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cap = weather_capture(tmp_path / "cap.jsonl")
    with http_server(lambda _message: (501, "text/html", b"<p>no POST here</p>")) as url:
        values = {
            "cap": str(cap),
            "cap2": str(modern_capture(tmp_path / "cap2.jsonl")),
            "dir": str(tmp_path),
            "port": str(closed_port()),
            "http_error": url,
        }
        assert main([a.format(**values) for a in argv]) == 2
    err = capsys.readouterr().err
    assert message in err
    assert "Traceback" not in err and "signal" not in err
    assert len(err.strip().splitlines()) == 1 and err.startswith("mcpeek: ")


def test_a_capture_without_client_requests_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    b = RecordBuilder()
    b.notify("notifications/message", {"level": "info", "data": "hi"})
    path = b.save(tmp_path / "cap.jsonl")
    assert main(["replay", str(path), "--", "true"]) == 2
    assert "no client request to replay" in capsys.readouterr().err


def test_options_may_follow_the_file_and_json_is_one_object_per_flow(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    b = RecordBuilder(modern=True)
    cache = {"ttlMs": 0, "cacheScope": "private"}
    b.request("server/discover", {}, id=1)
    b.result(1, {"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}}, **cache})
    b.request("tools/list", {}, id=2)
    b.result(2, {"tools": [{"name": "confirm"}], **cache})
    cap = b.save(tmp_path / "cap.jsonl")
    out = tmp_path / "out.jsonl"
    server = [sys.executable, *peer_argv("mrtr_server.py")[1:]]
    argv = ["replay", str(cap), "--format", "json", "-w", str(out), "--", *server]
    assert main(argv) == 1  # the live tool has a description and a schema
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(line["kind"], line.get("method")) for line in lines] == [
        ("flow", "server/discover"),
        ("flow", "tools/list"),
        ("summary", None),
    ]
    assert lines[0]["same"] and not lines[1]["same"]
    paths = {d["path"] for d in lines[1]["differences"]}
    assert paths == {"/result/tools/0/description", "/result/tools/0/inputSchema"}
    assert out.read_text().startswith('{"k":"header"')
    ignore = ["--ignore", "/result/tools/0/description", "--ignore", "/result/tools/0/inputSchema"]
    assert main(["replay", str(cap), *ignore, "--", *server]) == 0
    assert "2 flows, 2 same, 0 different" in capsys.readouterr().out


def modern_capture(path: Path, calls: int = 2) -> Path:
    b = RecordBuilder(modern=True)
    b.request("server/discover", {}, id=1)
    b.result(1, {"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}}})
    for n in range(calls):
        b.request("tools/call", {"name": "add", "arguments": {"a": n, "b": 1}}, id=2 + n)
        b.result(2 + n, {"content": [{"type": "text", "text": str(n + 1)}]})
    return b.save(path)


def test_http_errors_end_each_flow_at_once_with_the_status(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Regression: each request waited the whole --timeout, then "no live response".
    cap = modern_capture(tmp_path / "cap.jsonl")

    def answer(message: dict[str, Any]) -> Answer:
        if message.get("method") == "server/discover":
            body = {"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}}}
            reply = {"jsonrpc": "2.0", "id": message["id"], "result": body}
            return 200, "application/json", json.dumps(reply).encode()
        return 500, "text/plain", b"the tool broke"

    with http_server(answer) as url:
        code = main(["replay", str(cap), "--no-check", "--timeout", "5", "--url", f"{url}/mcp"])
    out = capsys.readouterr().out
    assert code == 1, out
    problem = "no live response: HTTP 500 Internal Server Error (the tool broke); recorded a result"
    assert out.count(f"  ! {problem}") == 2, out
    assert "within" not in out


def test_a_server_that_exits_mid_replay_is_named_as_the_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Regression: "no live response within 10 s" though it took no time, exit unsaid.
    cap = modern_capture(tmp_path / "cap.jsonl", calls=3)
    server = tmp_path / "dies_after.py"
    server.write_text(DIES_AFTER)
    code = main(["replay", str(cap), "--no-check", "--", sys.executable, str(server), "2", "1"])
    out = capsys.readouterr().out
    assert code == 1, out
    assert "note: the server exited (code 1) during the replay" in out
    assert "  ! no live response: the server exited (code 1); recorded a result" in out
    assert "  ! not sent: the server exited (code 1)" in out
    assert "within" not in out


def http_capture(path: Path, extra: list[tuple[str, str]]) -> Path:
    """A modern capture recorded over HTTP, each POST with the ``extra`` headers too."""
    b = RecordBuilder("http", modern=True)
    calls = [("server/discover", {}), ("tools/list", {})]
    for n, (method, params) in enumerate(calls, 1):
        x = f"x{n}"
        headers = [("mcp-protocol-version", "2026-07-28"), ("mcp-method", method), *extra]
        b.http(x, "request", method="POST", path="/mcp", headers=headers)
        b.request(method, params, id=n, ch=x)
        b.http(x, "response", status=200, headers=[("content-type", "application/json")])
        b.result(n, {"tools": []} if n == 2 else {"supportedVersions": ["2026-07-28"]}, ch=x)
        b.http(x, "end", reason="complete")
    return b.save(path)


def answer_as_recorded(message: dict[str, Any]) -> Answer:
    if message.get("method") == "server/discover":
        body: dict[str, Any] = {"supportedVersions": ["2026-07-28"]}
    else:
        body = {"tools": []}
    reply = {"jsonrpc": "2.0", "id": message["id"], "result": {**body, "resultType": "complete"}}
    return 200, "application/json", json.dumps(reply).encode()


def replay_quickly(
    cap: Path, capsys: pytest.CaptureFixture[str]
) -> tuple[int, pytest.CaptureResult[str]]:
    """Replay ``cap`` over HTTP (--timeout 5) against a server answering as recorded: its
    exit code and output, once sure no call waited for the timeout ("within" is how a
    timed-out call is reported) and nothing raised."""
    with http_server(answer_as_recorded) as url:
        code = main(["replay", str(cap), "--no-check", "--timeout", "5", "--url", f"{url}/mcp"])
    captured = capsys.readouterr()
    assert "within" not in captured.out, captured.out
    assert "Task exception" not in captured.err and "Traceback" not in captured.err
    return code, captured


def test_a_recorded_header_that_cannot_be_sent_is_left_out_with_a_note(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Regression: aiohttp refused the request ("Forbidden control character"), the task's
    # exception was never retrieved, and each request waited its whole --timeout.
    cap = http_capture(tmp_path / "cap.jsonl", [("x-custom", "a\nb"), ("bad name", "v")])
    code, captured = replay_quickly(cap, capsys)
    assert "note: the x-custom header cannot be sent (the value of x-custom holds" in captured.out
    assert "note: the bad name header cannot be sent ('bad name' is not a valid" in captured.out
    assert code == 0, captured.out
    assert "2 flows, 2 same, 0 different" in captured.out


def test_any_exception_in_a_send_task_fails_its_flow_at_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The root cause of the hang: an exception no handler expected ended the background
    # exchange task unseen, and the replay waited for a response that could not come.
    from mcpeek.inspector.replay.replay_http import HttpTransport

    def broken(*_args: Any) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(HttpTransport, "_answered", broken)
    code, captured = replay_quickly(http_capture(tmp_path / "cap.jsonl", []), capsys)
    assert code == 1, captured.out
    problem = "no live response: POST failed: RuntimeError: boom; recorded a result"
    assert captured.out.count(f"  ! {problem}") == 2, captured.out


def test_writing_over_the_capture_being_replayed_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cap = weather_capture(tmp_path / "cap.jsonl")
    recorded = cap.read_bytes()
    argv = ["replay", str(cap), "-w", str(cap), "--", sys.executable, "-c", "pass"]
    assert main(argv) == 2
    assert "is the capture being read" in capsys.readouterr().err
    assert cap.read_bytes() == recorded


@pytest.mark.parametrize(
    ("http_method", "jsonrpc_method", "said"),
    [("GET", "GET", "GET answered HTTP 404"), ("POST", "tools/call", "POST tools/call answered")],
)
def test_a_failed_exchange_is_named_once(http_method: str, jsonrpc_method: str, said: str) -> None:
    from types import SimpleNamespace

    from mcpeek.inspector.replay.replay_http import HttpTransport
    from mcpeek.inspector.replay.replay_transport import Outgoing

    notes: list[str] = []
    transport = HttpTransport("http://127.0.0.1:1/mcp", lambda _r: None, on_note=notes.append)
    item = Outgoing(data=None, kind="http", method=jsonrpc_method)
    response = SimpleNamespace(status=404, reason="Not Found")
    transport._failed(item, http_method, response, b"", first=False)  # type: ignore[arg-type]
    assert len(notes) == 1 and said in notes[0]
    assert f"{http_method} {http_method}" not in notes[0]
