"""The official MCP SDK over Streamable HTTP through ``mcpeek http``, both eras.

The SDK's server runs under uvicorn; the SDK's client talks to mcpeek's URL.
The conversation must complete as it does directly (progress over SSE, the
modern multi round-trip ``confirm`` tool, the legacy session with its GET
stream and DELETE), the capture must hold every exchange and message, and
lint must find nothing in the SDK's own traffic.
"""

from __future__ import annotations

import json
import signal
import socket
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from mcpeek import inspector
from mcpeek.inspector.records import Http
from tests.conftest import mcpeek_argv, peer_argv

pytestmark = pytest.mark.e2e


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def running(argv: list[str], ready: str) -> Iterator[subprocess.Popen[str]]:
    """Start a process and wait for the stderr line that says it is ready."""
    proc = subprocess.Popen(argv, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    seen = []
    try:
        for line in proc.stderr:
            seen.append(line)
            if ready in line:
                break
        else:
            raise AssertionError(f"{argv[:4]} never said {ready!r}: {''.join(seen)[-2000:]}")
        yield proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@pytest.mark.parametrize(
    ("era", "json_response"), [("modern", False), ("modern", True), ("legacy", False)]
)
def test_sdk_over_http_through_mcpeek(era: str, json_response: bool, tmp_path: Path) -> None:
    upstream_port, proxy_port = free_port(), free_port()
    capture = tmp_path / "http.jsonl"
    server_argv = peer_argv("sdk_http_server.py", "--port", str(upstream_port))
    if json_response:
        server_argv.append("--json-response")
    with (
        running(server_argv, "listening on"),
        running(
            mcpeek_argv(
                "http",
                "--upstream",
                f"http://127.0.0.1:{upstream_port}/mcp",
                "--listen",
                f"127.0.0.1:{proxy_port}",
                "-w",
                str(capture),
            ),
            "proxying",
        ) as proxy,
    ):
        client = subprocess.run(
            peer_argv(
                "sdk_http_client.py", "--era", era, "--url", f"http://127.0.0.1:{proxy_port}/mcp"
            ),
            capture_output=True,
            text=True,
            timeout=90,
        )
        assert client.returncode == 0, client.stderr[-3000:]
        proxy.send_signal(signal.SIGINT)
        assert proxy.stderr is not None
        proxy_err = proxy.stderr.read()
        assert proxy.wait(timeout=30) == 0, proxy_err[-2000:]
    outcome = json.loads(client.stdout)
    assert outcome["era"] == era and outcome["add"] == 5
    assert outcome["weather"] == "Sunny in Paris"
    assert outcome["confirm"] == "confirmed: Proceed?"
    assert outcome["progress"] == (0 if json_response else 3)
    assert "Traceback" not in proxy_err

    capture_data = inspector.load(capture)
    assert capture_data.problems == []
    exchanges = [r for r in capture_data.records if isinstance(r, Http)]
    requests = [r for r in exchanges if r.phase == "request"]
    ends = [r for r in exchanges if r.phase == "end"]
    assert {r.x for r in requests} == {r.x for r in ends}  # every exchange was closed
    flows = [f for f in capture_data.flows if f.status != "notification"]
    calls = {f.name: f for f in flows if f.method == "tools/call"}
    assert set(calls) == {"add", "count", "get_weather", "confirm"}
    assert all(f.status == "complete" for f in calls.values())
    assert calls["count"].progress_count == outcome["progress"]
    if era == "modern":
        assert [c.era for c in capture_data.conversations] == ["modern"]
        assert len(calls["confirm"].attempts) == 2  # input_required, then the retry
        assert calls["confirm"].attempts[0].result_type == "input_required"
        assert not any(r.method in ("GET", "DELETE") for r in requests)
    else:
        (conversation,) = capture_data.conversations
        assert conversation.era == "legacy" and conversation.key.startswith("http:session:")
        methods = [r.method for r in requests]
        assert "GET" in methods and "DELETE" in methods
        headers = dict(next(r for r in requests if r.method == "DELETE").headers or [])
        assert "mcp-session-id" in headers
        elicit = [f for f in capture_data.flows if f.method == "elicitation/create"]
        assert len(elicit) == 1 and elicit[0].sender == "s2c" and elicit[0].status == "complete"

    lint = subprocess.run(
        mcpeek_argv("lint", "--format", "json", "--min-severity", "warning", str(capture)),
        capture_output=True,
        text=True,
        timeout=60,
    )
    found = [json.loads(line) for line in lint.stdout.splitlines()]
    assert found == [], "\n".join(f"{v['rule']}: {v['message']}" for v in found)
