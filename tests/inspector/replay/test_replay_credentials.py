"""``mcpeek replay --url``: recorded credentials go back only to the origin they came from."""

from __future__ import annotations

import contextlib
import http.server
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mcpeek.inspector.capture import CaptureWriter
from mcpeek.inspector.cli.main import main
from mcpeek.inspector.testing.records import RecordBuilder

CREDENTIALS = [("authorization", "Bearer s3cret-token"), ("x-api-key", "k-123")]


@contextlib.contextmanager
def server(received: list[dict[str, str]]) -> Iterator[str]:
    """A loopback endpoint answering each POSTed request, keeping the headers it got."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            received.append({k.lower(): v for k, v in self.headers.items()})
            message = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            result: dict[str, Any] = {"tools": [], "resultType": "complete"}
            body = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/mcp"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)


def unredacted_capture(path: Path, upstream: str) -> Path:
    """A capture made with --no-redact from ``upstream``: its POST kept its credentials."""
    b = RecordBuilder("http", modern=True)
    headers = [("mcp-protocol-version", "2026-07-28"), ("mcp-method", "tools/list")]
    b.http("x1", "request", method="POST", path="/mcp", headers=[*headers, *CREDENTIALS])
    b.request("tools/list", {}, id=1, ch="x1")
    b.http("x1", "response", status=200, headers=[("content-type", "application/json")])
    b.result(1, {"tools": []}, ch="x1")
    b.http("x1", "end", reason="complete")
    with CaptureWriter(path, transport="http", target=upstream, redact=False) as writer:
        for record in b.records[1:]:
            writer.write(record)  # type: ignore[arg-type]
    return path


def replay(cap: Path, url: str, *options: str) -> int:
    return main(["replay", str(cap), "--no-check", "--timeout", "5", "--url", url, *options])


def test_credentials_are_not_sent_to_another_origin(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cap = unredacted_capture(tmp_path / "cap.jsonl", "https://mcp.example.com/mcp")
    assert b"s3cret-token" in cap.read_bytes()  # the capture does hold them
    received: list[dict[str, str]] = []
    with server(received) as url:
        code = replay(cap, url)
    out = capsys.readouterr().out
    assert code == 0, out
    assert received and all("authorization" not in h and "x-api-key" not in h for h in received)
    assert received[0]["mcp-method"] == "tools/list"  # the other recorded headers still go
    assert "note: recorded credentials not sent to http://127.0.0.1:" in out
    assert "(recorded from https://mcp.example.com:443): authorization, x-api-key" in out
    assert "--send-credentials" in out


def test_send_credentials_asks_for_them(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cap = unredacted_capture(tmp_path / "cap.jsonl", "https://mcp.example.com/mcp")
    received: list[dict[str, str]] = []
    with server(received) as url:
        assert replay(cap, url, "--send-credentials") == 0, capsys.readouterr().out
    assert received[0]["authorization"] == "Bearer s3cret-token"
    assert received[0]["x-api-key"] == "k-123"
    assert "recorded credentials not sent" not in capsys.readouterr().out


def test_the_recorded_origin_gets_them_back(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    received: list[dict[str, str]] = []
    with server(received) as url:
        cap = unredacted_capture(tmp_path / "cap.jsonl", url.replace("/mcp", "/other"))
        assert replay(cap, url) == 0, capsys.readouterr().out
    assert received[0]["authorization"] == "Bearer s3cret-token"
    assert "recorded credentials not sent" not in capsys.readouterr().out
