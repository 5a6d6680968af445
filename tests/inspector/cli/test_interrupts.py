"""Ctrl-C at awkward moments: no traceback from mcpeek or its live-checks worker,
and an old capture that ``--force`` was to replace stays until the run started."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import tomllib
from collections.abc import Callable
from pathlib import Path

import pytest

from mcpeek.inspector.capture import read_records
from mcpeek.inspector.cli import commands
from mcpeek.inspector.cli.main import main
from mcpeek.inspector.records import Event
from tests.conftest import mcpeek_argv

ROOT = Path(__file__).resolve().parents[3]
CAPTURE = ROOT / "captures" / "modern-stdio.jsonl"
PROC = Path("/proc")
on_linux = pytest.mark.skipif(not (PROC / "self" / "stat").exists(), reason="reads /proc")


def _sigint_default() -> None:
    # A suite started in the background of a script inherits SIGINT ignored, and so
    # would the command under test: it must see SIGINT as a terminal delivers it.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def wait_for(found: Callable[[], object], what: str, limit: float = 60.0) -> object:
    """Poll until ``found()`` is truthy (the limit only keeps a broken run from
    hanging the suite: nothing here asserts how long it took)."""
    end = time.monotonic() + limit
    while not (value := found()):
        if time.monotonic() > end:
            pytest.fail(f"never saw {what}")
        time.sleep(0.001)
    return value


def handles_sigint(pid: int) -> bool:
    """Whether ``pid`` catches or ignores SIGINT: a Python started with the default
    action installs its handler (KeyboardInterrupt) early in its start-up, before
    its imports; before that, a SIGINT ends it without a word."""
    try:
        status = (PROC / str(pid) / "status").read_text().splitlines()
    except OSError:
        return False
    masks = [int(line.split()[1], 16) for line in status if line.startswith(("SigIgn", "SigCgt"))]
    return any(mask & (1 << (signal.SIGINT - 1)) for mask in masks)


def live_worker_of(pid: int) -> int | None:
    """The pid of ``pid``'s live-checks worker, once it runs Python."""
    for entry in PROC.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rpartition(")")[2].split()[1])
            argv = (entry / "cmdline").read_bytes()
        except (OSError, IndexError, ValueError):
            continue
        if ppid == pid and b"live_worker" in argv:
            return int(entry.name)
    return None


def has_ended(pid: int) -> bool:
    try:
        state = (PROC / str(pid) / "stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return True
    return state in ("Z", "X")  # a zombie has ended: its parent has yet to reap it


def test_ctrl_c_while_the_command_loads_exits_130_without_a_traceback(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def interrupted(name: str | None) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(commands, "load", interrupted)
    try:
        code = main(["lint", "x.jsonl"])
    except KeyboardInterrupt:  # (caught here: it would stop pytest itself)
        pytest.fail("Ctrl-C escaped main: a traceback")
    assert code == 130


PROXIES = {
    "http": ["http", "--no-tui", "--upstream", "http://127.0.0.1:1/mcp", "--listen", "127.0.0.1:0"],
    "stdio": ["stdio", "--", "cat"],  # cat dies of the Ctrl-C quietly
}


@pytest.mark.e2e
@on_linux
@pytest.mark.parametrize("command", sorted(PROXIES))
def test_ctrl_c_as_the_live_worker_starts_prints_no_traceback(command: str, tmp_path: Path) -> None:
    # The terminal's Ctrl-C goes to the whole foreground process group: sent as
    # soon as the worker runs (in its imports, before its own code could ignore it).
    words = PROXIES[command]
    cut = words.index("--") if "--" in words else len(words)
    argv = mcpeek_argv(*words[:cut], "-w", str(tmp_path / "cap.jsonl"), *words[cut:])
    proc = subprocess.Popen(
        argv,
        preexec_fn=_sigint_default,  # noqa: PLW1509 (only signal(): async-signal-safe)
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        worker = wait_for(lambda: live_worker_of(proc.pid), "the live-checks worker")
        assert isinstance(worker, int)
        wait_for(lambda: handles_sigint(worker), "the worker handle SIGINT")
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
        proc.wait()
    text = err.decode(errors="replace")
    assert "Traceback" not in text and "Fatal Python error" not in text, text
    assert "KeyboardInterrupt" not in text, text
    wait_for(lambda: has_ended(worker), "the worker end")  # it never outlives the proxy


@pytest.mark.e2e
@on_linux
def test_the_worker_of_a_killed_proxy_ends(tmp_path: Path) -> None:
    # Out of the proxy's process group, the worker learns of its end from its stdin.
    argv = mcpeek_argv(*PROXIES["http"], "-w", str(tmp_path / "cap.jsonl"))
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        worker = wait_for(lambda: live_worker_of(proc.pid), "the live-checks worker")
        assert isinstance(worker, int)
        wait_for(lambda: handles_sigint(worker), "the worker handle SIGINT")
    finally:
        proc.kill()
        proc.wait()
    wait_for(lambda: has_ended(worker), "the worker end")


@pytest.mark.e2e
def test_ctrl_c_before_the_server_answered_keeps_the_old_capture(tmp_path: Path) -> None:
    path = tmp_path / "old.jsonl"
    old = CAPTURE.read_bytes()
    path.write_bytes(old)
    path.chmod(0o600)
    silent = [sys.executable, "-c", "import sys; sys.stdin.read()"]  # never answers
    argv = mcpeek_argv("replay", str(CAPTURE), "--force", "-w", str(path), "--", *silent)
    proc = subprocess.Popen(
        argv,
        preexec_fn=_sigint_default,  # noqa: PLW1509 (only signal(): async-signal-safe)
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )

    def spawned() -> bool:  # the new capture, beside the old one, has the spawn record
        return any(b'"spawn"' in p.read_bytes() for p in tmp_path.glob(".old.jsonl.*.new"))

    try:
        wait_for(spawned, "the server spawned")
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
        proc.wait()
    assert b"Traceback" not in err, err
    assert proc.returncode == 130
    assert err.decode().splitlines() == [
        f"mcpeek: replay interrupted (Ctrl-C); {path} kept as it was "
        "(the unfinished replay is not saved)"
    ]
    assert path.read_bytes() == old  # the run never started: the old capture stays
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old.jsonl"]  # nothing left beside


# A server that answers the first request, then never another: the replay waits.
ANSWERS_ONCE = """
import json, signal, sys
signal.signal(signal.SIGINT, signal.SIG_IGN)  # (so that only mcpeek ends it: no race)
line = sys.stdin.readline()
print(json.dumps({"jsonrpc": "2.0", "id": json.loads(line)["id"], "result": {}}), flush=True)
sys.stdin.read()
"""


def start_replay(path: Path, *extra: str) -> subprocess.Popen[bytes]:
    argv = mcpeek_argv("replay", str(CAPTURE), *extra, "-w", str(path), "--", sys.executable)
    return subprocess.Popen(
        [*argv, "-c", ANSWERS_ONCE],
        preexec_fn=_sigint_default,  # noqa: PLW1509 (only signal(): async-signal-safe)
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )


def answered(capture: Path) -> bool:
    """Whether ``capture`` (while the replay writes it) holds the server's answer."""
    try:
        return b'"dir":"s2c"' in capture.read_bytes()
    except FileNotFoundError:
        return False


@pytest.mark.e2e
@pytest.mark.parametrize(
    ("sig", "code", "said"), [(signal.SIGINT, 130, "Ctrl-C"), (signal.SIGTERM, 143, "SIGTERM")]
)
def test_a_replay_stopped_after_the_server_answered_keeps_the_old_capture(
    tmp_path: Path, sig: signal.Signals, code: int, said: str
) -> None:
    path = tmp_path / "old.jsonl"
    old = CAPTURE.read_bytes()
    path.write_bytes(old)
    path.chmod(0o600)
    proc = start_replay(path, "--force")
    try:
        wait_for(lambda: any(answered(p) for p in tmp_path.glob(".old.jsonl.*.new")), "an answer")
        os.killpg(proc.pid, sig)  # as a terminal (or a service manager) sends it
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == code
    assert err.decode().splitlines() == [
        f"mcpeek: replay interrupted ({said}); {path} kept as it was "
        "(the unfinished replay is not saved)"
    ]
    assert path.read_bytes() == old  # an unfinished replay never replaces it
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old.jsonl"]  # nothing left beside


@pytest.mark.e2e
def test_a_replay_stopped_into_a_new_file_keeps_what_it_recorded(tmp_path: Path) -> None:
    path = tmp_path / "new.jsonl"
    proc = start_replay(path)
    try:
        wait_for(lambda: answered(path), "an answer")
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == 130
    assert err.decode().splitlines() == [
        f"mcpeek: replay interrupted (Ctrl-C); the capture {path} holds the replay "
        "up to the interruption"
    ]
    assert out == b""  # no report of differences: the replay did not end
    header, records, problems = read_records(path)
    assert problems == [] and header.transport == "stdio"
    assert any(
        isinstance(r, Event) and r.event == "exit" for r in records
    )  # the server was stopped


def test_ctrl_c_while_the_installed_script_loads_exits_130_without_a_traceback() -> None:
    """The installed ``mcpeek`` script imports its entry point before anything can
    catch a Ctrl-C: that entry point is ``mcpeek.__main__:run``, a module that imports
    nothing, which loads the command line itself (~70 ms of imports) under its guard."""
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["mcpeek"] == "mcpeek.__main__:run"
    interrupted_load = (
        "import builtins, sys\n"
        "real = builtins.__import__\n"
        "def load(name, *args, **kwargs):\n"
        "    if name == 'mcpeek.inspector.cli.main':\n"
        "        raise KeyboardInterrupt  # as a Ctrl-C in the middle of the imports\n"
        "    return real(name, *args, **kwargs)\n"
        "builtins.__import__ = load\n"
        "from mcpeek.__main__ import run\n"
        "sys.exit(run())\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", interrupted_load], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 130
    assert proc.stderr == ""


def test_ctrl_c_while_replay_loads_its_capture_is_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from mcpeek import inspector

    def interrupted(path: object) -> None:
        raise KeyboardInterrupt  # as a Ctrl-C in the reading of a big capture

    monkeypatch.setattr(inspector, "load", interrupted)
    assert main(["replay", str(CAPTURE), "--", "cat"]) == 130
    assert capsys.readouterr().err == "mcpeek: replay interrupted (Ctrl-C)\n"
