"""``mcpeek replay`` on the command line: exit codes, options, the raw MRTR peer."""

from __future__ import annotations

import json
import socket
import sys
from pathlib import Path

import pytest

from inspector.cli.main import main
from inspector.testing.records import RecordBuilder
from tests.conftest import peer_argv


def weather_capture(path: Path) -> Path:
    b = RecordBuilder()
    b.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}}, id=1)
    b.result(1, {"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {}})
    return b.save(path)


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["replay", "{cap}"], "replay needs a server"),
        (["replay", "{cap}", "--url", "http://x/", "--", "true"], "not both"),
        (["replay", "{cap}", "--url", "ftp://x/"], "--url must be an http"),
        (["replay", "{cap}", "--ignore", "result", "--", "true"], "--ignore: JSON Pointer"),
        (["replay", "{cap}", "--timeout", "0", "--", "true"], "--timeout must be a positive"),
        (["replay", "{cap}", "-H", "nocolon", "--url", "http://x/"], "--header must look like"),
        (["replay", "{dir}/missing.jsonl", "--", "true"], "no such file"),
        (["replay", "{cap}", "--", "{dir}/no-such-server"], "cannot start the server"),
        (["replay", "{cap}", "--", "false"], "the server exited (code 1) before answering"),
        (["replay", "{cap}", "--url", "http://127.0.0.1:{port}/mcp"], "cannot reach"),
    ],
)
def test_usage_errors_and_unreachable_servers_exit_2_with_one_line(
    argv: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cap = weather_capture(tmp_path / "cap.jsonl")
    values = {"cap": str(cap), "dir": str(tmp_path), "port": str(closed_port())}
    assert main([a.format(**values) for a in argv]) == 2
    err = capsys.readouterr().err
    assert message in err
    assert "Traceback" not in err
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
