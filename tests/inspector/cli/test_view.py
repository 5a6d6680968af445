"""``mcpeek view`` as a process: bad input is a one-line error; in a real terminal it runs."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import mcpeek_argv

CAPTURES = Path(__file__).resolve().parents[3] / "captures"


def test_needs_a_terminal() -> None:
    proc = subprocess.run(
        mcpeek_argv("view", str(CAPTURES / "modern-stdio.jsonl")), capture_output=True, text=True
    )
    assert proc.returncode == 2
    assert proc.stderr.startswith("mcpeek: ") and "terminal" in proc.stderr
    assert "mcpeek show" in proc.stderr  # says what to do instead
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize(
    ("content", "expected"),
    [(None, "no such file"), (b"hello\n", "not an mcpeek capture"), (b"", "empty file")],
)
def test_unreadable_files_are_refused_before_the_ui(
    tmp_path: Path, content: bytes | None, expected: str
) -> None:
    path = tmp_path / "x.jsonl"
    if content is not None:
        path.write_bytes(content)
    proc = subprocess.run(mcpeek_argv("view", str(path)), capture_output=True, text=True)
    assert proc.returncode == 2 and expected in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


@pytest.mark.e2e
def test_waits_for_a_capture_directory_that_does_not_exist_yet(tmp_path: Path) -> None:
    home = tmp_path / "none"
    controller, terminal = pty.openpty()
    env = {
        **os.environ,
        "MCPEEK_HOME": str(home),
        "TERM": "xterm-256color",
        "COLUMNS": "120",
        "LINES": "30",
    }
    proc = subprocess.Popen(
        mcpeek_argv("view", "--no-recheck"),
        stdin=terminal,
        stdout=terminal,
        stderr=terminal,
        env=env,
        close_fds=True,
    )
    os.close(terminal)
    try:
        read_until(controller, b"waiting for captures", timeout=30)
        assert proc.poll() is None and not home.exists()  # it waits, and creates nothing
        os.write(controller, b"q")
        assert drain_until_exit(controller, proc, timeout=20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(controller)


def read_until(fd: int, needle: bytes, timeout: float) -> bytes:
    seen = b""
    deadline = time.monotonic() + timeout
    while needle not in seen:
        left = deadline - time.monotonic()
        if left <= 0:
            raise AssertionError(f"{needle!r} never shown; screen so far: {seen[-2000:]!r}")
        ready, _, _ = select.select([fd], [], [], left)
        if ready:
            try:
                seen += os.read(fd, 65536)
            except OSError:
                break
    return seen


def drain_until_exit(fd: int, proc: subprocess.Popen[bytes], timeout: float) -> int:
    """Keep reading the terminal while ``proc`` ends: a viewer that redraws (its
    timers, the status line) blocks on a full pty once nobody reads it, and then
    can neither take the key nor restore the terminal on its way out."""
    deadline = time.monotonic() + timeout
    while proc.poll() is None and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            try:
                os.read(fd, 65536)
            except OSError:
                break
    return proc.wait(timeout=max(deadline - time.monotonic(), 1))


@pytest.mark.e2e
def test_runs_in_a_real_terminal_and_quits_with_q() -> None:
    controller, terminal = pty.openpty()
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "120", "LINES": "30"}
    proc = subprocess.Popen(
        mcpeek_argv("view", "--no-recheck", str(CAPTURES / "modern-stdio.jsonl")),
        stdin=terminal,
        stdout=terminal,
        stderr=terminal,
        env=env,
        close_fds=True,
    )
    os.close(terminal)
    try:
        read_until(controller, b"get_weather", timeout=30)
        os.write(controller, b"q")
        assert drain_until_exit(controller, proc, timeout=20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(controller)
