"""Captures the export tests read: the repository's examples and one written here
with secrets in it (so that redaction can be seen to hold in the exports)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcpeek.inspector.capture.writer import CaptureWriter
from mcpeek.inspector.records import Http, Msg

CAPTURES = Path(__file__).resolve().parents[3] / "captures"
BEARER = "s3cr3t-bearer-value-0123456789"
AWS_KEY = "AKIAIOSFODNN7EXAMPLE"
GITHUB_TOKEN = "ghp_" + "A1b2C3d4E5" * 3 + "F6g7H8"
CALLER_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
CALLER_SPAN = "00f067aa0ba902b7"


def _message(**fields: object) -> str:
    return json.dumps({"jsonrpc": "2.0", **fields})


@pytest.fixture
def secret_capture(tmp_path: Path) -> Path:
    """An HTTP capture, written (and so redacted) by mcpeek's writer, whose request
    names a tool with a token for a name, sends a key and a bearer token, carries a
    caller's traceparent, and whose progress message holds a key."""
    path = tmp_path / "secrets.jsonl"
    writer = CaptureWriter(path, transport="http", target="http://127.0.0.1:9/mcp")
    meta = {
        "progressToken": 7,
        "traceparent": f"00-{CALLER_TRACE}-{CALLER_SPAN}-01",
        "tracestate": "vendor=abc",
    }
    call = _message(
        id=1,
        method="tools/call",
        params={"name": GITHUB_TOKEN, "arguments": {"key": AWS_KEY}, "_meta": meta},
    )
    progress = _message(
        method="notifications/progress",
        params={"progressToken": 7, "progress": 1, "total": 2, "message": f"using {AWS_KEY}"},
    )
    result = _message(id=1, result={"content": [{"type": "text", "text": "ok"}], "isError": True})
    writer.write_many(
        [
            Http(
                x="x1",
                phase="request",
                method="POST",
                path="/mcp?tenant=a",
                headers=[
                    ("authorization", f"Bearer {BEARER}"),
                    ("content-type", "application/json"),
                    ("mcp-protocol-version", "2025-11-25"),
                    # the session a legacy server gave at initialize, named on each request
                    ("mcp-session-id", "sess-1"),
                ],
            ),
            Msg(dir="c2s", ch="x1", raw=call),
            Http(
                x="x1",
                phase="response",
                status=200,
                headers=[("content-type", "text/event-stream"), ("mcp-session-id", "sess-1")],
            ),
            Msg(dir="s2c", ch="x1", raw=progress),
            Msg(dir="s2c", ch="x1", raw=result),
            Http(x="x1", phase="end", reason="complete"),
        ]
    )
    writer.close()
    return path
