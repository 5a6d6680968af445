"""Every Python process mcpeek starts imports mcpeek, never the working directory's code.

A client starts mcpeek in whatever directory it likes, often an untrusted
checkout. A folder there named like one of mcpeek's packages (or one of its
dependencies) must not run: not in mcpeek, not in the live-checks worker, not
in the demo's proxy and server.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import urllib.request
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest

from mcpeek.inspector.capture import read_records
from mcpeek.inspector.children import mcpeek_argv, python_module_argv
from tests.conftest import peer_argv
from tests.inspector.cli.test_http_cmd import _Upstream, free_port

pytestmark = pytest.mark.e2e

BAD_PING = b'{"jsonrpc":"1.0","id":1,"method":"ping"}\n'  # breaks jsonrpc.version


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    """A working directory whose code, if ever imported, leaves a marker file."""
    where = tmp_path / "untrusted"
    trap = f"open({str(where / 'MARKER')!r}, 'a').write(__name__ + '\\n')\n"
    for package in ("mcpeek", "mcpeek/inspector", "inspector", "inspector/cli", "rules", "tui"):
        (where / package).mkdir(parents=True)
        (where / package / "__init__.py").write_text(trap)
    (where / "msgspec.py").write_text(trap)
    return where


def installed_mcpeek(*args: str) -> list[str]:
    """mcpeek as a client starts it: the installed script, else this interpreter isolated."""
    script = Path(sys.executable).with_name("mcpeek")
    return [str(script), *args] if script.is_file() else mcpeek_argv(*args)


def rules_recorded(capture: Path) -> set[str]:
    return {getattr(r, "rule", "") for r in read_records(capture)[1]} - {""}


def test_the_argv_runs_a_module_isolated() -> None:
    argv = python_module_argv("mcpeek.inspector.cli.live_worker", "cap.jsonl")
    assert argv[0] == sys.executable and argv[1] == "-I"
    proc = subprocess.run(
        [*argv[:2], "-c", "import sys; print(sys.flags)"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "isolated=1" in proc.stdout and "ignore_environment=1" in proc.stdout


def test_stdio_runs_its_checks_not_the_working_directorys_code(
    hostile: Path, tmp_path: Path
) -> None:
    capture = tmp_path / "cap.jsonl"
    proc = subprocess.run(
        installed_mcpeek("stdio", "-w", str(capture), "--", *peer_argv("byte_server.py")),
        input=BAD_PING,
        capture_output=True,
        cwd=hostile,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert not (hostile / "MARKER").exists(), (hostile / "MARKER").read_text()
    assert b"mcpeek: ERROR jsonrpc.version" in proc.stderr  # the real checks ran
    assert "jsonrpc.version" in rules_recorded(capture)


def test_the_demo_runs_mcpeek_and_its_server_not_the_working_directorys_code(
    hostile: Path, tmp_path: Path
) -> None:
    capture = tmp_path / "demo.jsonl"
    proc = subprocess.run(
        installed_mcpeek("demo", "--headless", "--delay", "0", "-w", str(capture)),
        capture_output=True,
        text=True,
        cwd=hostile,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert not (hostile / "MARKER").exists(), (hostile / "MARKER").read_text()
    assert rules_recorded(capture)  # the demo server breaks rules on purpose: they were found


def test_http_runs_its_checks_not_the_working_directorys_code(
    hostile: Path, tmp_path: Path
) -> None:
    upstream = ThreadingHTTPServer(("127.0.0.1", 0), _Upstream)
    threading.Thread(target=upstream.serve_forever, daemon=True).start()
    port = free_port()
    capture = tmp_path / "http.jsonl"
    proc = subprocess.Popen(
        installed_mcpeek(
            "http",
            "--no-tui",
            "--upstream",
            f"http://127.0.0.1:{upstream.server_port}/mcp",
            "--listen",
            f"127.0.0.1:{port}",
            "-w",
            str(capture),
        ),
        stderr=subprocess.PIPE,
        text=True,
        cwd=hostile,
    )
    try:
        assert proc.stderr is not None
        proc.stderr.readline()  # listening
        body = json.dumps({"jsonrpc": "1.0", "id": 1, "method": "tools/list"}).encode()
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/mcp", data=body, headers={"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            response.read()
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        upstream.shutdown()
    assert not (hostile / "MARKER").exists(), (hostile / "MARKER").read_text()
    assert "mcpeek: ERROR jsonrpc.version" in err, err
    assert "jsonrpc.version" in rules_recorded(capture)


def test_the_viewers_recheck_runs_no_code_from_the_working_directory(
    hostile: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mcpeek.inspector.testing.records import RecordBuilder
    from mcpeek.tui.recheck import recheck

    builder = RecordBuilder()
    builder.raw(BAD_PING.decode().strip())
    capture = builder.save(tmp_path / "c.jsonl")
    monkeypatch.chdir(hostile)
    found = recheck(capture)
    assert not (hostile / "MARKER").exists(), (hostile / "MARKER").read_text()
    assert found is not None and "jsonrpc.version" in {v.rule for v in found}


def test_serve_and_the_pytest_plugin_start_mcpeek_isolated(hostile: Path) -> None:
    from mcpeek.inspector.pytest_plugin.runs import mcpeek_command
    from mcpeek.inspector.replay.serving import stdio_command

    for argv in (stdio_command("x.jsonl"), mcpeek_command("lint")):
        proc = subprocess.run(
            [*argv, "--help"], capture_output=True, text=True, cwd=hostile, timeout=60
        )
        assert proc.returncode == 0, proc.stderr
        assert not (hostile / "MARKER").exists(), (hostile / "MARKER").read_text()
