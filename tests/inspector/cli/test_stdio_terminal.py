"""``mcpeek stdio -- CMD`` started by hand, stdin a terminal: it says what it waits for."""

from __future__ import annotations

import os
import pty
import subprocess
from pathlib import Path

from tests.conftest import mcpeek_argv, peer_argv

WAITING = "waiting for an MCP client"


def run(tmp_path: Path, stdin: int) -> str:
    proc = subprocess.Popen(
        mcpeek_argv("stdio", "-w", str(tmp_path / "c.jsonl"), "--", *peer_argv("byte_server.py")),
        stdin=stdin,
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
    )
    return proc.communicate(timeout=30)[1]


def test_a_terminal_on_stdin_is_told_once_what_mcpeek_waits_for(tmp_path: Path) -> None:
    main, terminal = pty.openpty()
    try:
        os.write(main, b"\x04")  # Ctrl-D: end of input, once mcpeek reads it
        err = run(tmp_path, terminal)
    finally:
        os.close(terminal)
        os.close(main)
    assert err.count(WAITING) == 1 and "Ctrl-D" in err
    assert err.index("recording to") < err.index(WAITING)


def test_a_pipe_on_stdin_is_a_client_and_gets_no_such_notice(tmp_path: Path) -> None:
    assert WAITING not in run(tmp_path, subprocess.DEVNULL)
