"""A hung call over Streamable HTTP, live: the official SDK's server answering
``application/json`` (so its response head comes only once the call is done), the
SDK's client, ``mcpeek http -w`` between them, and ``mcpeek show --follow --slow
0.5`` on the capture, which must print the slow line while the call is held.

The server's get_weather waits for a release file: the test waits for the slow
line (an event), checks the call was not answered, then releases it.
"""

from __future__ import annotations

import json
import queue
import signal
import subprocess
import threading
from pathlib import Path

import pytest

from tests.conftest import mcpeek_argv, peer_argv
from tests.e2e.test_sdk_http import free_port, running
from tests.e2e.test_slow_calls import SAFETY_S, _lines, _until

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_a_held_http_call_is_slow_before_its_response_head(era: str, tmp_path: Path) -> None:
    upstream_port, proxy_port = free_port(), free_port()
    capture = tmp_path / "live.jsonl"
    release = tmp_path / "release"
    server = peer_argv(
        "sdk_http_server.py",
        *("--port", str(upstream_port), "--json-response", "--hold-weather", str(release)),
    )
    proxy_argv = mcpeek_argv(
        "http",
        *("--upstream", f"http://127.0.0.1:{upstream_port}/mcp"),
        *("--listen", f"127.0.0.1:{proxy_port}", "-w", str(capture)),
    )
    url = f"http://127.0.0.1:{proxy_port}/mcp"
    with running(server, "listening on"), running(proxy_argv, "proxying") as proxy:
        client = subprocess.Popen(
            peer_argv("sdk_http_client.py", "--era", era, "--url", url, "--skip-confirm"),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        show = subprocess.Popen(
            mcpeek_argv("show", "--follow", "--slow", "0.5", "--format", "json", str(capture)),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            lines: queue.Queue[str | None] = queue.Queue()
            assert show.stdout is not None
            threading.Thread(target=_lines, args=(show.stdout, lines), daemon=True).start()
            seen: list[str] = []
            while True:  # another call may be slow too on a loaded machine
                _until(lines, '"pending_ms"', seen)
                if "get_weather" in seen[-1]:
                    break
            # Held: no response head for it yet, and yet the call is in flight.
            assert not any("get_weather" in line and "complete" in line for line in seen)
            assert "Sunny" not in capture.read_text()
            release.touch()
            out, err = client.communicate(timeout=SAFETY_S)
            assert client.returncode == 0, err.decode()[-3000:]
            assert json.loads(out)["weather"] == "Sunny in Paris"
            _until(lines, "get_weather", seen)  # its usual line, once answered
            proxy.send_signal(signal.SIGINT)  # the capture ends: show --follow ends
            assert proxy.wait(timeout=SAFETY_S) == 0
            assert show.wait(timeout=SAFETY_S) == 0, show.stderr.read() if show.stderr else ""
        finally:
            for proc in (client, show):
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
    slow_line, done_line = [line for line in seen if "get_weather" in line]
    slow, done = json.loads(slow_line), json.loads(done_line)
    assert slow["status"] == "pending" and slow["pending_ms"] >= 500
    assert done["status"] == "complete" and done["flow"] == slow["flow"]
    heads = [
        json.loads(line)
        for line in capture.read_text().splitlines()
        if '"phase":"response"' in line and "application/json" in line
    ]
    assert heads, "the server answered POSTs with application/json"
