"""Record a real SDK conversation through mcpeek, for the tests that replay or serve it.

Both helpers run the official SDK client against the official SDK server with
mcpeek in between, write the capture to ``capture``, and return the client's
outcome JSON (what it got from the real server). The proxy is stopped before
they return, so the capture is complete.
"""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path

from tests.conftest import mcpeek_argv, peer_argv
from tests.e2e.test_sdk_http import free_port, running


def record_stdio(era: str, capture: Path) -> dict[str, object]:
    proxy = mcpeek_argv("stdio", "-q", "-w", str(capture), "--", *peer_argv("sdk_server.py"))
    proc = subprocess.run(
        peer_argv("sdk_client.py", "--era", era, "--", *proxy), capture_output=True, timeout=90
    )
    assert proc.returncode == 0, proc.stderr.decode()[-3000:]
    outcome: dict[str, object] = json.loads(proc.stdout)
    return outcome


def record_http(
    era: str,
    capture: Path,
    *options: str,
    env: dict[str, str] | None = None,
) -> dict[str, object]:
    """The same through ``mcpeek http`` (with ``options``, e.g. ``--otlp URL``); the
    client runs with ``env``. The proxy must end cleanly on Ctrl-C (exit 0)."""
    upstream, proxy_port = free_port(), free_port()
    proxy_argv = mcpeek_argv(
        "http",
        "--upstream",
        f"http://127.0.0.1:{upstream}/mcp",
        "--listen",
        f"127.0.0.1:{proxy_port}",
        *options,
        "-w",
        str(capture),
    )
    with (
        running(peer_argv("sdk_http_server.py", "--port", str(upstream)), "listening on"),
        running(proxy_argv, "proxying") as proxy,
    ):
        url = f"http://127.0.0.1:{proxy_port}/mcp"
        client = peer_argv("sdk_http_client.py", "--era", era, "--url", url)
        proc = subprocess.run(client, capture_output=True, text=True, timeout=90, env=env)
        assert proc.returncode == 0, proc.stderr[-3000:]
        proxy.send_signal(signal.SIGINT)
        assert proxy.wait(timeout=30) == 0
    outcome: dict[str, object] = json.loads(proc.stdout)
    return outcome
