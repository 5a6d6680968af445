"""Capture files as the commands meet them: private modes, no links, one writer, no
overwriting without --force, no FIFOs or devices, no empty captures from failed starts."""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mcpeek.inspector.capture import read_records
from mcpeek.inspector.capture.redact_rules import marker
from mcpeek.inspector.records import Msg, Violation
from tests.conftest import mcpeek_argv
from tests.inspector.cli.test_interrupts import has_ended

pytestmark = pytest.mark.e2e

CAPTURE = Path(__file__).resolve().parents[3] / "captures" / "modern-stdio.jsonl"
QUIET_SERVER = [sys.executable, "-c", "import sys; sys.stdin.read()"]
# What -w means for each command that has it (FILE is replaced by the path).
WRITERS = {
    "stdio": ["stdio", "-w", "FILE", "--", *QUIET_SERVER],
    "http": ["http", "--upstream", "http://127.0.0.1:1/mcp", "--listen", "127.0.0.1:0", "-w"],
    "demo": ["demo", "--headless", "--delay", "0", "-w", "FILE"],
    "serve": ["serve", str(CAPTURE), "-w", "FILE"],
    "replay": ["replay", str(CAPTURE), "-w", "FILE", "--", *QUIET_SERVER],
}
WRITERS["http"] += ["FILE", "--no-tui"]
READERS = {
    "lint": ["lint", "FILE"],
    "show": ["show", "FILE"],
    "view": ["view", "FILE"],
    "serve": ["serve", "FILE"],
    "replay": ["replay", "FILE", "--", *QUIET_SERVER],
}


def mcpeek(
    words: list[str], path: Path, *, timeout: float = 30, **kwargs: object
) -> subprocess.CompletedProcess[str]:
    argv = mcpeek_argv(*(str(path) if w == "FILE" else w for w in words))
    return subprocess.run(  # type: ignore[call-overload, no-any-return]
        argv,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        **kwargs,
    )


def refused(proc: subprocess.CompletedProcess[str], reason: str) -> None:
    """Exit 2 with one line saying ``reason``, no traceback."""
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("mcpeek: ") and reason in lines[0], lines


@pytest.mark.parametrize("command", sorted(WRITERS))
def test_w_onto_a_capture_that_holds_data_needs_force(command: str, tmp_path: Path) -> None:
    path = tmp_path / "old.jsonl"
    old = CAPTURE.read_bytes()
    path.write_bytes(old)
    refused(mcpeek(WRITERS[command], path), "already exists; add --force")
    assert path.read_bytes() == old


def test_force_overwrites(tmp_path: Path) -> None:
    path = tmp_path / "old.jsonl"
    path.write_bytes(CAPTURE.read_bytes())
    proc = mcpeek(["stdio", "--force", "-w", "FILE", "--", *QUIET_SERVER], path)
    assert proc.returncode == 0, proc.stderr
    header, records, _ = read_records(path)
    assert header.target == [str(w) for w in QUIET_SERVER]
    assert not any(isinstance(r, Msg) for r in records)  # the old conversation is gone


@pytest.mark.parametrize("command", sorted(WRITERS))
def test_w_onto_a_fifo_is_refused_without_hanging(command: str, tmp_path: Path) -> None:
    path = tmp_path / "pipe.jsonl"
    os.mkfifo(path)  # opened for writing, it would block until a reader came
    refused(mcpeek(WRITERS[command], path), "is a FIFO (named pipe), not a regular file")


@pytest.mark.parametrize("command", sorted(READERS))
def test_reading_a_fifo_is_refused_without_hanging(command: str, tmp_path: Path) -> None:
    path = tmp_path / "pipe.jsonl"
    os.mkfifo(path)  # opened for reading, it would block until a writer came
    refused(mcpeek(READERS[command], path), "is a FIFO (named pipe), not a capture file")


@pytest.mark.parametrize("command", ["lint", "show"])
def test_reading_a_device_or_a_directory_is_refused(command: str, tmp_path: Path) -> None:
    refused(mcpeek(READERS[command], Path(os.devnull)), "is a character device")
    refused(mcpeek(READERS[command], tmp_path), "is a directory, not a capture file")


def test_w_onto_a_device_is_refused(tmp_path: Path) -> None:
    refused(mcpeek(WRITERS["stdio"], Path(os.devnull)), "is a character device")


def test_a_planted_symlink_is_not_followed(tmp_path: Path) -> None:
    victim = tmp_path / "notes.txt"
    victim.write_text("precious\n")
    link = tmp_path / "cap.jsonl"
    link.symlink_to(victim)
    refused(mcpeek(["stdio", "--force", *WRITERS["stdio"][1:]], link), "is a symbolic link")
    assert victim.read_text() == "precious\n"


def test_a_file_of_another_user_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "theirs.jsonl"
    path.touch()
    if os.geteuid() == 0:
        os.chown(path, 65534, 65534)
    else:
        path = Path("/etc/passwd")  # root's, whoever runs the tests
    refused(mcpeek(WRITERS["stdio"], path), "belongs to another user")


def test_the_capture_directory_is_private_whatever_the_umask(tmp_path: Path) -> None:
    state = tmp_path / "state"
    env = {**os.environ, "XDG_STATE_HOME": str(state)}
    env.pop("MCPEEK_HOME", None)
    proc = mcpeek(
        ["stdio", "-q", "--", *QUIET_SERVER], tmp_path, env=env, preexec_fn=lambda: os.umask(0)
    )
    assert proc.returncode == 0, proc.stderr
    directory = state / "mcpeek" / "captures"
    (capture,) = directory.iterdir()
    assert stat.S_IMODE(capture.stat().st_mode) == 0o600
    for made in (state, state / "mcpeek", directory):
        assert stat.S_IMODE(made.stat().st_mode) == 0o700, made


def test_a_second_proxy_on_the_same_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "same.jsonl"
    echo = [sys.executable, "-c", "import sys\nfor line in sys.stdin: print(line, end='')"]
    first = subprocess.Popen(
        mcpeek_argv("stdio", "--no-check", "-w", str(path), "--", *echo),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert first.stdin is not None and first.stdout is not None
        first.stdin.write(b'{"jsonrpc":"2.0","id":1,"method":"initialize"}\n')
        first.stdin.flush()
        assert first.stdout.readline().startswith(b'{"jsonrpc"')  # it runs, file locked
        for force in ([], ["--force"]):  # a live capture is never overwritten
            second = mcpeek(["stdio", *force, "-w", "FILE", "--", *QUIET_SERVER], path)
            refused(second, "is being written by another mcpeek")
        first.stdin.write(b'{"jsonrpc":"2.0","id":2,"method":"ping"}\n')
        first.stdin.close()
        assert first.wait(timeout=30) == 0
    finally:
        first.kill()
        first.wait()
    header, records, problems = read_records(path)
    assert problems == [] and header.target[-1] == echo[-1]
    assert [r.seq for r in records] == list(range(1, len(records) + 1))
    assert [r.raw[:40] for r in records if isinstance(r, Msg) and r.dir == "c2s"] == [
        '{"jsonrpc":"2.0","id":1,"method":"initia',
        '{"jsonrpc":"2.0","id":2,"method":"ping"}',
    ]


def test_a_server_that_cannot_start_leaves_no_capture(tmp_path: Path) -> None:
    env = {**os.environ, "MCPEEK_HOME": str(tmp_path / "home")}
    proc = mcpeek(["stdio", "--", "/no/such/server"], tmp_path, env=env)
    assert proc.returncode == 2 and "cannot start the server" in proc.stderr
    assert list((tmp_path / "home").iterdir()) == []


def test_a_mock_whose_forward_server_cannot_start_leaves_no_capture(tmp_path: Path) -> None:
    path = tmp_path / "new.jsonl"
    proc = mcpeek(["serve", str(CAPTURE), "-w", "FILE", "--", "/no/such/server"], path)
    refused(proc, "cannot start /no/such/server")
    assert list(tmp_path.iterdir()) == []


def test_a_port_taken_leaves_no_capture(tmp_path: Path) -> None:
    path = tmp_path / "cap.jsonl"
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        words = ["http", "--upstream", "http://127.0.0.1:1/mcp", "--listen"]
        proc = mcpeek([*words, f"127.0.0.1:{port}", "-w", "FILE", "--no-tui"], path)
    refused(proc, "cannot listen on")
    assert not path.exists()


def test_serve_that_cannot_listen_leaves_no_capture(tmp_path: Path) -> None:
    path = tmp_path / "cap.jsonl"
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = mcpeek(["serve", str(CAPTURE), "--listen", f"127.0.0.1:{port}", "-w", "FILE"], path)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert not path.exists()


def _failed_starts(port: int) -> dict[str, list[str]]:
    """Each -w command with --force, in a run that cannot start."""
    listen = ["--listen", f"127.0.0.1:{port}"]
    http = ["http", "--upstream", "http://127.0.0.1:1/mcp", *listen, "--no-tui"]
    return {
        "stdio": ["stdio", "--force", "-w", "FILE", "--", "/no/such/server"],
        "http": [*http, "--force", "-w", "FILE"],
        "serve": ["serve", str(CAPTURE), *listen, "--force", "-w", "FILE"],
        "replay": ["replay", str(CAPTURE), "--force", "-w", "FILE", "--", "/no/such/server"],
        # A mock whose forward server cannot start never served.
        "serve-forward": ["serve", str(CAPTURE), "--force", "-w", "FILE", "--", "/no/such/server"],
        # Runs that start their child or their connection but never hear the server:
        # the first record written (the request sent) must not replace the old capture.
        "replay-unreachable": [
            *["replay", str(CAPTURE), "--url", "http://127.0.0.1:1/mcp"],
            *["--force", "-w", "FILE"],
        ],
        "replay-exits": [
            *["replay", str(CAPTURE), "--force", "-w", "FILE", "--"],
            *[sys.executable, "-c", "import sys; sys.exit(3)"],
        ],
    }


@pytest.mark.parametrize(
    "command",
    ["stdio", "http", "serve", "serve-forward", "replay", "replay-unreachable", "replay-exits"],
)
def test_force_keeps_the_old_capture_when_the_run_fails_to_start(
    command: str, tmp_path: Path
) -> None:
    path = tmp_path / "old.jsonl"
    old = CAPTURE.read_bytes()
    path.write_bytes(old)
    path.chmod(0o600)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        proc = mcpeek(_failed_starts(taken.getsockname()[1])[command], path)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert path.read_bytes() == old  # the run never started: the old capture stays
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old.jsonl"]  # nothing left beside


def test_force_replaces_the_capture_once_the_run_started(tmp_path: Path) -> None:
    path = tmp_path / "old.jsonl"
    path.write_bytes(CAPTURE.read_bytes())
    path.chmod(0o644)
    proc = mcpeek(["stdio", "--force", "-w", "FILE", "--", *QUIET_SERVER], path)
    assert proc.returncode == 0, proc.stderr
    header, _, _ = read_records(path)
    assert header.target == [str(w) for w in QUIET_SERVER]
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old.jsonl"]


def test_the_live_checks_follow_a_capture_that_replaced_another(tmp_path: Path) -> None:
    """With --force the records go to a file beside the old capture, which takes its
    name once the server runs: the live worker, slower to start, still reads them."""
    path = tmp_path / "old.jsonl"
    path.write_bytes(CAPTURE.read_bytes())
    server = 'print(\'{"jsonrpc":"1.0","id":1,"method":"ping"}\', flush=True)'
    proc = mcpeek(["stdio", "--force", "-w", "FILE", "--", sys.executable, "-c", server], path)
    assert proc.returncode == 0, proc.stderr
    assert "live checks stopped" not in proc.stderr, proc.stderr
    _, records, _ = read_records(path)
    assert "jsonrpc.version" in [r.rule for r in records if isinstance(r, Violation)]


def test_ctrl_c_before_the_http_proxy_listens_keeps_the_old_capture(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Interrupted before it listened (a viewer's Ctrl-C comes as KeyboardInterrupt),
    the run never started: with --force the old capture stays, nothing is left beside."""
    from mcpeek.inspector.cli.commands import http as http_command
    from mcpeek.inspector.cli.main import main

    path = tmp_path / "old.jsonl"
    old = CAPTURE.read_bytes()
    path.write_bytes(old)
    path.chmod(0o600)

    def interrupted(main_coroutine: object) -> None:
        main_coroutine.close()  # type: ignore[attr-defined]
        raise KeyboardInterrupt

    monkeypatch.setattr(http_command.asyncio, "run", interrupted)
    argv = ["http", "--upstream", "http://127.0.0.1:1/mcp", "--listen", "127.0.0.1:0"]
    assert main([*argv, "-w", str(path), "--force", "--no-tui", "-q"]) == 130
    assert path.read_bytes() == old
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old.jsonl"]


def test_a_capture_that_cannot_take_its_name_is_one_line_and_keeps_the_old_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """-w FILE --force: the rename that replaces FILE as the run starts fails (here,
    refused): a usage error, the new capture discarded, FILE as it was."""
    from mcpeek.inspector.cli.main import main

    path = tmp_path / "old.jsonl"
    old = CAPTURE.read_bytes()
    path.write_bytes(old)
    path.chmod(0o600)

    def refused(src: object, dst: object) -> None:
        raise PermissionError(13, "Permission denied", str(src), None, str(dst))

    monkeypatch.setattr(os, "replace", refused)
    argv = ["http", "--upstream", "http://127.0.0.1:1/mcp", "--listen", "127.0.0.1:0"]
    assert main([*argv, "-w", str(path), "--force", "--no-tui", "-q", "--no-check"]) == 2
    err = capsys.readouterr().err
    assert err == f"mcpeek: cannot replace {path}: Permission denied\n", err
    assert path.read_bytes() == old
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old.jsonl"]


def test_stdio_whose_capture_cannot_take_its_name_stops_its_server(tmp_path: Path) -> None:
    """The same in stdio, where the rename comes once the server runs: the server is
    stopped, not left running without its proxy (this one would outlive its stdin)."""
    path = tmp_path / "old.jsonl"
    old = CAPTURE.read_bytes()
    path.write_bytes(old)
    path.chmod(0o600)
    pid_file = tmp_path / "server.pid"
    server = (
        f"import os, time; open({str(pid_file)!r}, 'w').write(str(os.getpid())); time.sleep(60)"
    )
    refusing = (
        "import os, sys\n"
        "def refused(src, dst):\n"
        "    raise PermissionError(13, 'Permission denied', str(src), None, str(dst))\n"
        "os.replace = refused\n"
        "from mcpeek.inspector.cli.main import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    argv = ["stdio", "-w", str(path), "--force", "-q", "--no-check", "--", sys.executable]
    done = subprocess.run(
        [sys.executable, "-c", refusing, *argv, "-c", server],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr == f"mcpeek: cannot replace {path}: Permission denied\n", done.stderr
    assert path.read_bytes() == old
    time.sleep(1.0)  # a server left running has written its pid by now
    assert sorted(p.name for p in tmp_path.iterdir() if p != pid_file) == ["old.jsonl"]
    if pid_file.exists():  # it ran before it was stopped: it must have ended
        assert has_ended(int(pid_file.read_text()))


def test_a_failure_once_the_capture_replaced_the_old_one_keeps_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once the new capture has taken FILE's name, the old one is gone: whatever
    fails next, the new one is kept, not discarded with it."""
    from mcpeek.inspector.cli.main import main
    from mcpeek.inspector.cli.otlp_live import OtlpFollower

    path = tmp_path / "old.jsonl"
    path.write_bytes(CAPTURE.read_bytes())
    path.chmod(0o600)

    def broken(self: OtlpFollower, capture: Path, *, quiet: bool = False) -> None:
        raise RuntimeError("a bug between the rename and the listening")

    monkeypatch.setattr(OtlpFollower, "start", broken)
    argv = ["http", "--upstream", "http://127.0.0.1:1/mcp", "--listen", "127.0.0.1:0"]
    with pytest.raises(RuntimeError):
        main([*argv, "-w", str(path), "--force", "--no-tui", "-q", "--no-check"])
    header, _, _ = read_records(path)
    assert header.target == "http://127.0.0.1:1/mcp"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old.jsonl"]


def test_a_servers_command_line_credentials_stay_out_of_the_capture(tmp_path: Path) -> None:
    """The header records the command with the values of its credential options
    replaced; the server still gets them as given (it echoes, and exits 0)."""
    path = tmp_path / "c.jsonl"
    server = [
        "env",
        "API_KEY=k-123",
        "sh",
        "-c",
        "cat",
        "sh",
        "--token=t-456",
        "--api-key",
        "k-789",
    ]
    ping = b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n'
    proc = subprocess.run(
        mcpeek_argv("stdio", "-w", str(path), "-q", "--no-check", "--", *server),
        input=ping,
        capture_output=True,
        timeout=60,
    )
    assert proc.returncode == 0 and proc.stdout == ping
    header, _, _ = read_records(path)
    assert header.target == [
        "env",
        f"API_KEY={marker('k-123')}",
        *["sh", "-c", "cat", "sh"],
        f"--token={marker('t-456')}",
        "--api-key",
        marker("k-789"),
    ]
    assert not any(secret in path.read_bytes() for secret in (b"k-123", b"t-456", b"k-789"))
