"""``--home DIR``: the capture directory of one proxy run, for clients (the Python
SDK's stdio client) that start mcpeek without the user's ``MCPEEK_HOME``."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from mcpeek.inspector.capture import read_records
from tests.conftest import mcpeek_argv, peer_argv


def run_stdio(tmp_path: Path, *options: str) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "MCPEEK_HOME": str(tmp_path / "env-home")}
    return subprocess.run(
        mcpeek_argv("stdio", *options, "--", *peer_argv("byte_server.py")),
        input=b"{}\n",
        capture_output=True,
        env=env,
        timeout=30,
    )


def test_stdio_home_beats_the_environment(tmp_path: Path) -> None:
    proc = run_stdio(tmp_path, "--home", str(tmp_path / "run-home"))
    assert proc.returncode == 0, proc.stderr
    (capture,) = (tmp_path / "run-home").iterdir()
    assert read_records(capture)[1]
    assert not (tmp_path / "env-home").exists()


def test_write_beats_home(tmp_path: Path) -> None:
    chosen = tmp_path / "chosen.jsonl"
    proc = run_stdio(tmp_path, "--home", str(tmp_path / "run-home"), "-w", str(chosen))
    assert proc.returncode == 0, proc.stderr
    assert chosen.is_file() and not (tmp_path / "run-home").exists()


def test_http_writes_its_capture_under_home(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"  # a home that cannot be created shows where it wrote
    blocker.write_text("")
    proc = subprocess.run(
        mcpeek_argv(
            "http", "--home", str(blocker / "home"), "--upstream", "http://127.0.0.1:1/mcp"
        ),
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"mcpeek: cannot write the capture {blocker / 'home'}/")
    assert "Traceback" not in proc.stderr
