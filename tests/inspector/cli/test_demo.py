"""``mcpeek demo``: the scripted session through the real stdio proxy, headless."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from mcpeek.inspector.cli.main import main
from tests.conftest import mcpeek_argv
from tests.inspector.cli.test_view import read_until

DELIBERATE = {"tools.output-schema", "result.result-type-missing"}
FLOWS = [  # (the flow's line must contain all of these)
    ("→ server/discover  id 1  ← complete",),
    ("→ tools/list  id 2  ← complete",),
    ("→ resources/list  id 3  ← complete",),
    ("→ tools/call build  id 5  ← complete", "[3 progress]"),
    ("→ tools/call deploy  ids 6→7  ← complete", "[2 rounds]"),  # the MRTR chain
    ("→ tools/call status  id 8  ← complete",),
    ("→ tools/call add_note  id 9  ← complete",),
    ("→ resources/read demo://notes/todo.md  id 10  ← complete",),
    ("→ tools/call search  id 11  ← cancelled", "[1 progress]"),  # the cancelled call
    ("→ subscriptions/listen  id 4  ← cancelled", "[2 notifications]"),  # ack + event
]
RULE_LINE = re.compile(r"^  (ERROR|WARNING|INFO)\s+(\S+)  \((\d+)\)$")


def reported_rules(out: str) -> dict[str, int]:
    """The rules of lint's text report, with their counts."""
    found = {}
    for line in out.splitlines():
        match = RULE_LINE.match(line)
        if match:
            found[match.group(2)] = int(match.group(3))
    return found


def check_output(out: str, capture: Path) -> None:
    lines = out.splitlines()
    flow_lines = [line for line in lines if re.match(r"^\d\d:\d\d:\d\d\.\d{3}  [→←] ", line)]
    assert len(flow_lines) == len(FLOWS), out
    for line, expected in zip(flow_lines, FLOWS, strict=True):
        for part in expected:
            assert part in line, (part, line)
    assert any("stderr  demo-server: ready" in line for line in lines)
    report = out[out.index("\nviolations") :]
    assert f"{capture}: 2 errors" in report
    assert reported_rules(report) == dict.fromkeys(DELIBERATE, 1)
    assert f"capture: {capture}" in lines


def lint_rules(capture: Path) -> tuple[int, list[str]]:
    proc = subprocess.run(
        mcpeek_argv("lint", "--format", "json", str(capture)),
        capture_output=True,
        text=True,
        timeout=60,
    )
    return proc.returncode, sorted(json.loads(line)["rule"] for line in proc.stdout.splitlines())


@pytest.mark.e2e  # the whole demo session, at its pace, in real processes
def test_headless_demo_shows_the_flows_and_exactly_two_violations(tmp_path: Path) -> None:
    capture = tmp_path / "demo.jsonl"
    proc = subprocess.run(
        mcpeek_argv("demo", "--headless", "-w", str(capture)),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    check_output(proc.stdout, capture)
    assert proc.stderr == ""
    # lint agrees, at every severity: the two deliberate rules and nothing else
    assert lint_rules(capture) == (1, sorted(DELIBERATE))
    # and so did the proxy's live checks, stored in the capture
    records = [json.loads(line) for line in capture.read_text().splitlines()]
    assert sorted(r["rule"] for r in records if r["k"] == "violation") == sorted(DELIBERATE)
    assert records[-1]["k"] in ("event", "violation")
    assert {"k": "event", "event": "exit", "code": 0}.items() <= next(
        r for r in records if r.get("event") == "exit"
    ).items()


def test_without_a_terminal_the_demo_runs_headless(tmp_path: Path) -> None:
    capture = tmp_path / "demo.jsonl"
    proc = subprocess.run(
        mcpeek_argv("demo", "--delay", "0", "-w", str(capture)),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == "mcpeek: not a terminal: running the demo --headless\n"
    check_output(proc.stdout, capture)


def test_default_capture_is_a_temporary_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--headless", "--delay", "0"]) == 0
    out = capsys.readouterr().out
    capture = Path(re.findall(r"^capture: (.+)$", out, re.MULTILINE)[-1])
    try:
        assert capture.name.startswith("mcpeek-demo-") and capture.suffix == ".jsonl"
        check_output(out, capture)
    finally:
        capture.unlink()


def test_a_demo_that_cannot_run_exits_1(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def broken(capture: Path, *, delay: float) -> list[str]:
        return [sys.executable, "-c", "import sys; sys.exit('mcpeek: no such luck')"]

    monkeypatch.setattr("mcpeek.inspector.cli.commands.demo.proxy_command", broken)
    assert main(["demo", "--headless", "-w", str(tmp_path / "c.jsonl")]) == 1
    assert "mcpeek: demo failed: " in capsys.readouterr().err


@pytest.mark.parametrize(
    "args", [["--delay", "-1"], ["--delay", "nan"], ["-w", "/proc/no/such/dir/c.jsonl"]]
)
def test_usage_errors(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--headless", *args]) == 2
    assert capsys.readouterr().err.startswith("mcpeek: ")


def in_a_terminal(args: list[str]) -> tuple[subprocess.Popen[bytes], int]:
    controller, terminal = pty.openpty()
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "120", "LINES": "30"}
    proc = subprocess.Popen(
        mcpeek_argv("demo", *args),
        stdin=terminal,
        stdout=terminal,
        stderr=terminal,
        env=env,
        close_fds=True,
    )
    os.close(terminal)
    return proc, controller


def drain_rest(fd: int) -> bytes:
    """What is left on the terminal once the process has exited."""
    seen = b""
    while select.select([fd], [], [], 0.5)[0]:
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
    return seen


def drain(fd: int, done: Callable[[], bool], timeout: float, what: str) -> bytes:
    """Read the terminal (a full pty would block the app) until ``done()``."""
    seen = b""
    deadline = time.monotonic() + timeout
    while not done():
        assert time.monotonic() < deadline, f"{what}; screen so far: {seen[-2000:]!r}"
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            try:
                seen += os.read(fd, 65536)
            except OSError:  # the terminal's other side is closed
                time.sleep(0.1)
    return seen


@pytest.mark.e2e
def test_in_a_terminal_the_viewer_follows_the_session(tmp_path: Path) -> None:
    capture = tmp_path / "demo.jsonl"
    proc, controller = in_a_terminal(["--delay", "0.1", "-w", str(capture)])
    try:
        read_until(controller, b"search", timeout=60)  # the last call, shown live
        drain(controller, lambda: b'"event":"exit"' in capture.read_bytes(), 30, "no end")
        os.write(controller, b"q")
        after = drain(controller, lambda: proc.poll() is not None, 30, "q did not quit")
        after += drain_rest(controller)
        assert proc.returncode == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(controller)
    assert f"capture: {capture}".encode() in after
    assert b"stopped before its end" not in after
    assert lint_rules(capture) == (1, sorted(DELIBERATE))


@pytest.mark.e2e
def test_quitting_the_viewer_early_stops_the_session(tmp_path: Path) -> None:
    capture = tmp_path / "demo.jsonl"
    proc, controller = in_a_terminal(["-w", str(capture)])
    try:
        read_until(controller, b"server/discover", timeout=60)
        os.write(controller, b"q")
        after = drain(controller, lambda: proc.poll() is not None, 30, "q did not quit")
        after += drain_rest(controller)
        assert proc.returncode == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(controller)
    assert b"the demo was stopped before its end" in after
    assert f"capture: {capture}".encode() in after
    records = [json.loads(line) for line in capture.read_text().splitlines()]
    assert any(r.get("event") == "exit" for r in records)  # mcpeek finished the capture


def test_ctrl_c_still_says_where_the_capture_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr("mcpeek.inspector.cli.commands.demo.run_capture", interrupted)
    capture = tmp_path / "c.jsonl"
    assert main(["demo", "--headless", "--delay", "0", "-w", str(capture)]) == 130
    out = capsys.readouterr().out
    assert "stopped before its end (Ctrl-C)" in out
    assert f"capture: {capture}" in out.splitlines()
