"""The command line contract: help, version, usage errors, default capture place."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from mcpeek.inspector import __version__
from mcpeek.inspector.capture import read_records
from mcpeek.inspector.cli.base import Command
from mcpeek.inspector.cli.main import main
from mcpeek.inspector.paths import capture_dir
from tests.conftest import mcpeek_argv, needs, peer_argv


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.strip() == f"mcpeek {__version__}"


def test_no_command_prints_help_and_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert "stdio" in capsys.readouterr().err


def test_every_registered_command_has_help() -> None:
    assert "stdio" in Command.registry
    for name, cls in Command.registry.items():
        assert cls.help, name


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["stdio"], "stdio needs the server command after --"),
        (["stdio", "--"], "stdio needs the server command after --"),
        (["stdio", "--grace", "-1", "--", "x"], "--grace must be a number of seconds"),
        (["stdio", "--grace", "nan", "--", "x"], "--grace must be a number of seconds"),
        (["show", "--timeout", "nan", "x.jsonl"], "--timeout must be a finite number"),
        (["show", "--timeout", "inf", "x.jsonl"], "--timeout must be a finite number"),
        (["lint", "--timeout", "1e400", "x.jsonl"], "--timeout must be a finite number"),
    ],
)
def test_usage_errors(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    assert capsys.readouterr().err.startswith(f"mcpeek: {message}")


def test_unknown_option_is_a_usage_error() -> None:
    proc = subprocess.run(mcpeek_argv("stdio", "--bogus"), capture_output=True, timeout=30)
    assert proc.returncode == 2 and b"Traceback" not in proc.stderr


@pytest.mark.parametrize(
    "argv",
    [
        ["show", "--bogus", "x.jsonl"],
        ["show", "x.jsonl", "extra"],
        ["stdio", "--bogus", "--", "true"],
        ["lint", "--fail-on", "error", "--bogus", "x.jsonl"],
        ["http", "--upstream", "http://127.0.0.1:1/mcp", "--bogus"],
    ],
)
def test_a_wrong_word_shows_the_subcommands_usage(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith(f"usage: mcpeek {argv[0]} ")
    wrong = "extra" if "extra" in argv else "--bogus"
    assert f"mcpeek {argv[0]}: error: unrecognized arguments: {wrong}" in err


def test_unwritable_capture_is_a_clear_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    proc = subprocess.run(
        mcpeek_argv("stdio", "-w", str(blocker / "sub" / "c.jsonl"), "--", "true"),
        capture_output=True,
        timeout=30,
    )
    assert proc.returncode == 2
    assert proc.stderr.decode().startswith("mcpeek: cannot write the capture")
    assert b"Traceback" not in proc.stderr


def test_default_capture_goes_to_the_capture_directory(tmp_path: Path) -> None:
    env = {**os.environ, "MCPEEK_HOME": str(tmp_path / "home")}
    proc = subprocess.run(
        mcpeek_argv("stdio", "--", *peer_argv("byte_server.py")),
        input=b"{}\n",
        capture_output=True,
        env=env,
        timeout=30,
    )
    assert proc.returncode == 0
    files = list((tmp_path / "home").iterdir())
    assert len(files) == 1
    assert re.fullmatch(r"\d{8}-\d{6}-\d+\.jsonl", files[0].name)
    assert read_records(files[0])[1]


def test_capture_dir_defaults(tmp_path: Path) -> None:
    assert capture_dir({"MCPEEK_HOME": str(tmp_path)}) == tmp_path
    if sys.platform.startswith("linux"):
        assert capture_dir({"XDG_STATE_HOME": "/x/state"}) == Path("/x/state/mcpeek/captures")
        assert capture_dir({}) == Path.home() / ".local/state/mcpeek/captures"


def test_a_reader_that_stops_early_is_no_error() -> None:
    """`mcpeek rules | head -1`: a closed pipe ends the command quietly."""
    proc = subprocess.run(
        f"{shlex.join(mcpeek_argv('rules'))} | head -1", shell=True, capture_output=True, text=True
    )
    assert proc.stdout.count("\n") == 1
    assert "Traceback" not in proc.stderr and "BrokenPipe" not in proc.stderr


@pytest.mark.parametrize("argv", [["rules"], ["lint", "--format", "sarif", "VIOLATIONS"]])
def test_output_that_cannot_be_written_is_a_clear_error(argv: list[str]) -> None:
    """`mcpeek lint … > /dev/full`: lost output is exit 2 with a message, not a traceback
    (nor 1, which a CI job would read as findings)."""
    needs(Path("/dev/full").exists(), "/dev/full (a Linux device)")
    violations = str(Path(__file__).parents[3] / "captures" / "violations.jsonl")
    argv = [violations if word == "VIOLATIONS" else word for word in argv]
    with open("/dev/full", "w") as full:
        proc = subprocess.run(mcpeek_argv(*argv), stdout=full, stderr=subprocess.PIPE, text=True)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip() == "mcpeek: cannot write the output: No space left on device"


def test_help_texts_show_no_markup() -> None:
    for command in ("show", "view", "serve", "replay", "stdio", "lint"):
        out = subprocess.run(mcpeek_argv(command, "--help"), capture_output=True, text=True)
        assert out.returncode == 0
        assert "``" not in out.stdout and ":class:" not in out.stdout, command
