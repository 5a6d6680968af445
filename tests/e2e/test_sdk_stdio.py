"""The official MCP SDK, client and server, talking through ``mcpeek stdio``, both eras.

Two byte-exact tees sit on either side of mcpeek and log what each SDK peer
really wrote and read; the capture must hold exactly those bytes, in order,
and the conversation must complete as it does without mcpeek.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from mcpeek import inspector
from mcpeek.inspector.capture import read_records
from mcpeek.inspector.jsonrpc import MessageDecoder
from mcpeek.inspector.records import Msg, wire_bytes
from mcpeek.inspector.testing.wire import stream_bytes
from tests.conftest import mcpeek_argv, peer_argv

pytestmark = pytest.mark.e2e

EXPECTED_METHODS = {
    "modern": ["server/discover", "tools/list", "tools/call", "tools/call", "tools/call"],
    "legacy": ["initialize", "tools/list", "tools/call", "tools/call", "tools/call"],
}


def tee_argv(logs: Path, side: str, *command: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "mcpeek.inspector.testing.tee",
        "--in-log",
        str(logs / f"{side}.in"),
        "--out-log",
        str(logs / f"{side}.out"),
        "--",
        *command,
    ]


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_sdk_conversation_through_mcpeek(era: str, tmp_path: Path, capture_path: Path) -> None:
    server = tee_argv(tmp_path, "server", *peer_argv("sdk_server.py"))
    mcpeek = mcpeek_argv("stdio", "--log", "flows", "-w", str(capture_path), "--", *server)
    # mcpeek's stderr to a file of our own: the SDK client does not pass it on
    stderr_log = tmp_path / "mcpeek.err"
    proxy = tee_argv(tmp_path, "client", "sh", "-c", f'exec "$@" 2>"{stderr_log}"', "sh", *mcpeek)
    proc = subprocess.run(
        peer_argv("sdk_client.py", "--era", era, "--", *proxy), capture_output=True, timeout=90
    )
    assert proc.returncode == 0, proc.stderr.decode()[-3000:]
    outcome = json.loads(proc.stdout)
    assert outcome["era"] == era
    assert outcome["protocol_version"] == ("2026-07-28" if era == "modern" else "2025-11-25")
    assert outcome["add"] == 5 and outcome["progress"] == 3
    assert outcome["weather"] == "Sunny in Paris"

    header, records, problems = read_records(capture_path)
    assert problems == []
    assert header.target[-1].endswith("sdk_server.py")
    client_wrote = (tmp_path / "client.in").read_bytes()
    client_read = (tmp_path / "client.out").read_bytes()
    server_read = (tmp_path / "server.in").read_bytes()
    server_wrote = (tmp_path / "server.out").read_bytes()
    assert client_wrote == server_read == stream_bytes(records, "c2s")
    assert server_wrote == client_read == stream_bytes(records, "s2c")

    decoder = MessageDecoder()
    messages = [(r.dir, decoder.decode(wire_bytes(r))) for r in records if isinstance(r, Msg)]
    assert all(m.kind != "invalid" for _, m in messages)
    requests = [m.method for d, m in messages if d == "c2s" and m.kind == "request"]
    assert requests == EXPECTED_METHODS[era]
    progress = [m for d, m in messages if m.method == "notifications/progress"]
    assert len(progress) == 3 and all(d == "s2c" for d, m in messages if m in progress)
    responses = [m for d, m in messages if d == "s2c" and m.kind == "result"]
    assert sorted(m.id for m in responses) == sorted(
        m.id for d, m in messages if m.kind == "request"
    )
    if era == "legacy":
        assert "notifications/initialized" in [m.method for _, m in messages]

    # Correlation of the same capture: the flows a user would expect.
    capture = inspector.load(capture_path)
    (conversation,) = capture.conversations
    assert conversation.era == era
    assert conversation.protocol_version == outcome["protocol_version"]
    assert conversation.declared.server_info["name"] == "mcpeek-sdk-server"
    assert set(conversation.declared.tools) == {"add", "count", "get_weather"}
    calls = [
        (f.method, f.name, f.status, f.progress_count)
        for f in capture.flows
        if f.status != "notification"
    ]
    assert calls == [
        (EXPECTED_METHODS[era][0], None, "complete", 0),
        ("tools/list", None, "complete", 0),
        ("tools/call", "add", "complete", 0),
        ("tools/call", "count", "complete", 3),
        ("tools/call", "get_weather", "complete", 0),
    ]
    assert all(f.era == era for f in capture.flows)
    assert len(capture.messages) == len(messages)
    # --log flows: one line per flow on mcpeek's stderr, after the server's own line
    err_lines = stderr_log.read_text().splitlines()
    assert "sdk_server: ready" in err_lines
    log = [ln for ln in err_lines if "← complete" in ln]
    assert len(log) == 5 and all(ln.startswith("mcpeek: ") for ln in log)
