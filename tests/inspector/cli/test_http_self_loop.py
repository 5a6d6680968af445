"""``mcpeek http`` whose --upstream is its own --listen address: refused at start
(each request relayed would come back as a new one, without end)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from mcpeek.inspector.cli.urls import is_own_address
from tests.conftest import mcpeek_argv
from tests.inspector.cli.test_http_cmd import free_port


@pytest.mark.parametrize(
    ("url", "host", "port", "own"),
    [
        ("http://127.0.0.1:8000/mcp", "127.0.0.1", 8000, True),
        ("http://localhost:8000/mcp", "127.0.0.1", 8000, True),
        ("http://[::1]:8000/mcp", "localhost", 8000, True),
        ("http://127.0.0.1:8000/mcp", "0.0.0.0", 8000, True),
        ("http://0.0.0.0:8000/mcp", "127.0.0.1", 8000, True),
        ("http://LOCALHOST/mcp", "::1", 80, True),  # the scheme's port
        ("https://127.0.0.1/mcp", "127.0.0.1", 443, True),
        ("http://192.0.2.7:8000/mcp", "192.0.2.7", 8000, True),
        ("http://127.0.0.1:8001/mcp", "127.0.0.1", 8000, False),  # another port
        ("https://127.0.0.1/mcp", "127.0.0.1", 80, False),
        ("http://example.com:8000/mcp", "127.0.0.1", 8000, False),  # another host
        ("http://127.0.0.1:8000/mcp", "192.0.2.7", 8000, False),
    ],
)
def test_own_address(url: str, host: str, port: int, own: bool) -> None:
    assert is_own_address(url, host, port) is own


@pytest.mark.e2e
@pytest.mark.parametrize("upstream_host", ["127.0.0.1", "localhost"])
def test_an_upstream_that_is_the_proxy_itself_is_refused(
    upstream_host: str, tmp_path: Path
) -> None:
    port = free_port()
    path = tmp_path / "loop.jsonl"
    argv = ["--upstream", f"http://{upstream_host}:{port}/mcp", "--listen", f"127.0.0.1:{port}"]
    proc = subprocess.run(
        mcpeek_argv("http", "--no-tui", "-w", str(path), *argv),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("mcpeek: --upstream "), lines
    assert "own --listen address" in lines[0]
    assert not path.exists()  # it never relayed: no capture
