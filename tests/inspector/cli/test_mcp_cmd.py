"""``mcpeek mcp``'s command line: bad input is one ``mcpeek:`` line and exit 2."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from mcpeek.inspector.cli.main import main
from tests.conftest import mcpeek_argv


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--http", "0.0.0.0:0"], "mcpeek: --http 0.0.0.0:0: mcpeek mcp listens on loopback only"),
        (["--http", "example.com:80"], "mcpeek: --http example.com:80: mcpeek mcp listens on"),
        (["--http", "127.0.0.1:http"], "mcpeek: --http '127.0.0.1:http': expected HOST:PORT"),
        (["--capture", "no/such.jsonl"], "mcpeek: --capture no/such.jsonl: no such file"),
        (["--capture", "tests"], "mcpeek: --capture tests: is a directory, not a capture file"),
        (["--capture", "{fifo}"], "mcpeek: --capture {fifo}: is a FIFO (named pipe), not a"),
        (["--home", "{file}"], "mcpeek: --home {file}: not a directory (of captures)"),
    ],
)
def test_bad_options(
    argv: list[str], said: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    fifo, file = tmp_path / "fifo.jsonl", tmp_path / "file.jsonl"
    os.mkfifo(fifo)
    file.write_bytes(b"")
    argv = [a.format(fifo=fifo, file=file) for a in argv]
    said = said.format(fifo=fifo, file=file)
    assert main(["mcp", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith(said) and len(err.splitlines()) == 1


def test_without_the_sdk_it_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # An import of a submodule already loaded would not look at its parent: forget them.
    loaded = [m for m in sys.modules if m.startswith(("mcpeek.inspector.assist", "mcp.", "mcp_"))]
    for name in loaded:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "mcp", None)  # what an install without the extra has
    assert main(["mcp", "--home", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    hint = "pip install '.[mcp]' in mcpeek's clone"
    assert err == f"mcpeek: mcpeek mcp needs the official MCP SDK: {hint}\n"


@pytest.mark.parametrize(("fd", "name"), [(0, "input"), (1, "output")])
def test_a_closed_standard_stream_is_one_line_not_the_sdks_traceback(fd: int, name: str) -> None:
    proc = subprocess.run(
        mcpeek_argv("mcp"),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: os.close(fd),
        timeout=60,
    )
    assert proc.returncode == 2
    said = "mcpeek: mcpeek mcp speaks MCP on its standard input and output, and its standard"
    assert proc.stderr.startswith(f"{said} {name} is closed")
    assert proc.stderr.count("\n") == 1
