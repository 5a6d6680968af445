"""Wrapped client configs, started exactly as the client starts them.

``mcpeek wrap`` rewrites a config whose server is the official SDK's stdio
server; a real SDK client then reads the entry back from the file and starts
its command, args and env (nothing else: the SDK's filtered environment), as
Claude Desktop does. The conversation must complete, mcpeek must have
recorded it where the entry's env (or wrap --home) says, and ``unwrap`` must give back the
original file byte for byte. Likewise for an HTTP entry pointed at the
``mcpeek http`` that ``wrap --http`` says to start.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from mcpeek import inspector
from mcpeek.inspector.capture import read_records
from mcpeek.inspector.jsonrpc import MessageDecoder
from mcpeek.inspector.records import Msg, wire_bytes
from tests.conftest import PEERS, mcpeek_argv, peer_argv
from tests.e2e.test_sdk_http import free_port, running

pytestmark = pytest.mark.e2e


def desktop_config(env: dict[str, str]) -> str:
    """A Claude Desktop config in its documented shape, written by hand (tabs, a key
    Claude Desktop has and mcpeek does not know)."""
    server = json.dumps([str(PEERS / "sdk_server.py")])
    return (
        "{\n"
        '\t"mcpServers": {\n'
        '\t\t"sdk": {\n'
        f'\t\t\t"command": {json.dumps(sys.executable)},\n'
        f'\t\t\t"args": {server},\n'
        f'\t\t\t"env": {json.dumps(env)}\n'
        "\t\t}\n"
        "\t},\n"
        '\t"globalShortcut": ""\n'
        "}\n"
    )


# Where the capture goes: told by the entry's env (modern), or by wrap --home (legacy).
@pytest.mark.parametrize(("era", "home_by"), [("modern", "env"), ("legacy", "--home")])
def test_a_wrapped_config_runs_through_mcpeek_and_unwraps(
    era: str, home_by: str, tmp_path: Path
) -> None:
    captures = tmp_path / "captures"
    config = tmp_path / "claude_desktop_config.json"
    original = desktop_config({"MCPEEK_HOME": str(captures)} if home_by == "env" else {})
    config.write_text(original)
    home = ["--home", str(captures)] if home_by == "--home" else []

    wrapped = subprocess.run(
        mcpeek_argv("wrap", "claude-desktop", "--config", str(config), *home),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert wrapped.returncode == 0, wrapped.stderr
    entry = json.loads(config.read_text())["mcpServers"]["sdk"]
    assert entry["args"][: 5 + len(home)] == ["-I", "-m", "mcpeek", "stdio", *home, "--"]

    talk = subprocess.run(
        peer_argv("config_client.py", "--config", str(config), "--server", "sdk", "--era", era),
        capture_output=True,
        timeout=90,
    )
    assert talk.returncode == 0, talk.stderr.decode()[-3000:]
    outcome = json.loads(talk.stdout)
    assert outcome["weather"] == "Sunny in Paris" and outcome["add"] == 5
    assert outcome["progress"] == 3

    [capture] = captures.glob("*.jsonl")
    header, records, problems = read_records(capture)
    assert problems == []
    assert header.target == [sys.executable, str(PEERS / "sdk_server.py")]
    decoder = MessageDecoder()
    messages = [(r.dir, decoder.decode(wire_bytes(r))) for r in records if isinstance(r, Msg)]
    calls = [m.method for d, m in messages if d == "c2s" and m.method == "tools/call"]
    assert len(calls) == 3
    answers = [wire_bytes(r) for r in records if isinstance(r, Msg) and r.dir == "s2c"]
    assert any(b"Sunny in Paris" in answer for answer in answers)

    unwrapped = subprocess.run(
        mcpeek_argv("unwrap", "claude-desktop", "--config", str(config)),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert unwrapped.returncode == 0, unwrapped.stderr
    assert config.read_text() == original


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_wrap_http_points_the_client_at_the_proxy_it_prints(era: str, tmp_path: Path) -> None:
    """An HTTP entry of a Claude Code .mcp.json: wrap --http rewrites its url and
    prints the mcpeek http command; with that command running, the SDK's HTTP
    client, given the url read back from the file, talks to the server through
    mcpeek; unwrap gives the file back."""
    upstream_port, proxy_port = free_port(), free_port()
    config = tmp_path / ".mcp.json"
    original = (
        '{\n  "mcpServers": {\n    "remote": {\n      "type": "http",\n'
        f'      "url": "http://127.0.0.1:{upstream_port}/mcp",\n'
        '      "headers": {"X-Team": "mcpeek"}\n    }\n  }\n}\n'
    )
    config.write_text(original)
    wrapped = subprocess.run(
        mcpeek_argv("wrap", "claude-code", "--config", str(config), "--http", str(proxy_port)),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert wrapped.returncode == 0, wrapped.stderr
    [printed] = [
        line.split("needs  ", 1)[1]
        for line in wrapped.stderr.splitlines()
        if line.startswith("mcpeek: remote needs  ")
    ]
    command = shlex.split(printed)
    assert command[:2] == ["mcpeek", "http"]
    url = json.loads(config.read_text())["mcpServers"]["remote"]["url"]
    assert url == f"http://127.0.0.1:{proxy_port}/mcp"

    capture = tmp_path / "http.jsonl"
    server = peer_argv("sdk_http_server.py", "--port", str(upstream_port))
    proxy = mcpeek_argv(*command[1:], "-w", str(capture))
    with running(server, "listening on"), running(proxy, "proxying"):
        client = subprocess.run(
            peer_argv("sdk_http_client.py", "--era", era, "--url", url, "--skip-confirm"),
            capture_output=True,
            text=True,
            timeout=90,
        )
    assert client.returncode == 0, client.stderr[-3000:]
    assert json.loads(client.stdout)["weather"] == "Sunny in Paris"
    calls = [f for f in inspector.load(capture).flows if f.method == "tools/call"]
    assert {f.name for f in calls} == {"add", "count", "get_weather"}

    unwrapped = subprocess.run(
        mcpeek_argv("unwrap", "claude-code", "--config", str(config)),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert unwrapped.returncode == 0, unwrapped.stderr
    assert config.read_text() == original
