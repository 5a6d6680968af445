"""``-w`` names with ``{n}`` / ``{pid}``: a client that starts the server command twice
(the TypeScript SDK's ``auto`` mode: a short probe, then the session) gets two
captures instead of a refused second run (issue #15, item 15)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from mcpeek.inspector.capture import read_records
from mcpeek.inspector.capture.writer import CaptureWriter
from mcpeek.inspector.cli.base import UsageError
from mcpeek.inspector.cli.recording import open_capture
from mcpeek.inspector.records import Msg
from tests.conftest import mcpeek_argv

ECHO = [sys.executable, "-c", "import sys\nfor line in sys.stdin: print(line, end='')"]


def writer_on(path: Path, *, force: bool = False) -> CaptureWriter:
    return open_capture(path, force=force, transport="stdio", target=["server"])


def test_n_takes_the_first_number_not_taken(tmp_path: Path) -> None:
    pattern = tmp_path / "cap-{n}.jsonl"
    first = writer_on(pattern)  # held open: a live capture, locked
    second = writer_on(pattern)
    assert (first.path.name, second.path.name) == ("cap-1.jsonl", "cap-2.jsonl")
    first.close()
    second.close()  # both hold their header now
    (tmp_path / "cap-3.jsonl").touch()  # an empty leftover is free
    third = writer_on(pattern)
    assert third.path.name == "cap-3.jsonl"
    third.close()
    assert writer_on(pattern).path.name == "cap-4.jsonl"


def test_pid_is_this_process(tmp_path: Path) -> None:
    writer = writer_on(tmp_path / "cap-{pid}.jsonl")
    assert writer.path.name == f"cap-{os.getpid()}.jsonl"
    writer.close()


def test_force_with_n_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"--force does nothing with \{n\}"):
        writer_on(tmp_path / "cap-{n}.jsonl", force=True)


def run_session(pattern: Path, text: str) -> subprocess.CompletedProcess[bytes]:
    line = b'{"jsonrpc":"2.0","id":1,"method":"' + text.encode() + b'"}\n'
    return subprocess.run(
        mcpeek_argv("stdio", "--no-check", "-w", str(pattern), "--", *ECHO),
        input=line,
        capture_output=True,
        timeout=30,
    )


@pytest.mark.e2e
def test_a_probe_then_a_session_make_two_captures(tmp_path: Path) -> None:
    pattern = tmp_path / "cap-{n}.jsonl"
    probe = run_session(pattern, "server/discover")
    session = run_session(pattern, "initialize")
    assert probe.returncode == 0 == session.returncode, session.stderr
    assert probe.stdout.startswith(b'{"jsonrpc"') and session.stdout.startswith(b'{"jsonrpc"')
    methods = []
    for n in (1, 2):
        _, records, problems = read_records(tmp_path / f"cap-{n}.jsonl")
        assert problems == []
        methods.append([r.raw for r in records if isinstance(r, Msg) and r.dir == "c2s"])
    assert methods == [
        ['{"jsonrpc":"2.0","id":1,"method":"server/discover"}'],
        ['{"jsonrpc":"2.0","id":1,"method":"initialize"}'],
    ]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cap-1.jsonl", "cap-2.jsonl"]
    # what mcpeek says names the file it took, not the pattern
    assert f"recording to {tmp_path / 'cap-1.jsonl'}" in probe.stderr.decode()
    assert f"recorded in {tmp_path / 'cap-2.jsonl'}" in session.stderr.decode()
