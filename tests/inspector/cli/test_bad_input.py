"""Bad input to the commands: one line ``mcpeek: ...`` and exit 2, nothing lost,
never a traceback; and input that only looks odd (a byte order mark) is read."""

from __future__ import annotations

import os
import re
import resource
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from mcpeek.inspector.cli.base import UsageError
from mcpeek.inspector.cli.main import main
from mcpeek.inspector.cli.recording import open_capture
from mcpeek.inspector.cli.urls import check_origin
from tests.conftest import mcpeek_argv
from tests.inspector.cli.test_capture_durability import fresh_bytecode

CAPTURES = Path(__file__).resolve().parents[3] / "captures"
CAPTURE = CAPTURES / "modern-stdio.jsonl"


def with_bom(tmp_path: Path) -> Path:
    """The example capture as an editor may save it: a UTF-8 byte order mark first."""
    path = tmp_path / "bom.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + CAPTURE.read_bytes())
    return path


@pytest.mark.parametrize(
    "words",
    [
        ["lint", "{bom}"],
        ["show", "--format", "json", "{bom}"],
        ["diff", "{bom}", str(CAPTURE)],
        ["export", "--format", "otlp-json", "{bom}"],
    ],
)
def test_a_capture_saved_with_a_byte_order_mark_is_read(
    words: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bom = str(with_bom(tmp_path))
    code = main([word.replace("{bom}", bom) for word in words])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "not an mcpeek capture" not in err
    assert out  # the capture was read: flows, findings or spans were written


# A --header-timeout refused after the origins: a version that took any origin stops
# there, with another message, instead of starting a proxy that would never end.
HTTP = ["http", "--no-tui", "--upstream", "http://127.0.0.1:1/mcp", "--header-timeout", "0"]


@pytest.mark.parametrize(
    ("origin", "why"),
    [
        ("foo", "is not an origin: expected scheme://host[:port]"),
        ("localhost:5173", "is not an origin"),
        ("http://x/path", "has a path"),
        ("http://x?q=1", "has a query"),
        ("http://user@x", "has a user"),
        ("http://", "is not an origin"),
        ("http://x:99999", "is not a valid origin: Port out of range"),
        ("http://x:80", "without its default port, as 'http://x'"),
        ("https://x:443", "without its default port, as 'https://x'"),
    ],
)
def test_an_allowed_origin_that_no_browser_can_send_is_refused(
    origin: str, why: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capture = tmp_path / "c.jsonl"
    code = main(
        [*HTTP, "-w", str(capture), "--allow-origin", "http://ok:3000", "--allow-origin", origin]
    )
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith(f"mcpeek: --allow-origin {origin!r}")
    assert why in err and err.count("\n") == 1
    assert not capture.exists()  # refused before anything was opened


@pytest.mark.parametrize(
    "origin",
    [
        "http://localhost:5173",
        "https://app.example",
        "http://x/",
        "http://[::1]:8080",
        "chrome-extension://abcdef",
        "null",
    ],
)
def test_origins_a_browser_sends_are_taken(origin: str) -> None:
    check_origin("--allow-origin", origin)  # no UsageError


@pytest.mark.parametrize(
    ("option", "make", "said"),
    [
        ("--faults", os.mkfifo, "is a FIFO (named pipe), not a file"),  # (was: waits for ever)
        ("-s", os.mkfifo, "is a FIFO (named pipe), not a file"),
        ("-s", os.mkdir, "is a directory, not a file"),  # (was: "no such file")
        ("--faults", os.mkdir, "is a directory, not a file"),
    ],
)
def test_an_action_file_that_is_no_file_is_refused_at_once(
    option: str, make: Callable[[Path], None], said: str, tmp_path: Path
) -> None:
    path = tmp_path / "rules"
    make(path)
    capture = tmp_path / "c.jsonl"
    proc = subprocess.run(
        mcpeek_argv("stdio", option, str(path), "-w", str(capture), "--", "cat"),
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,  # (only a bound: the FIFO's open never returned)
    )
    assert proc.returncode == 2
    assert proc.stderr == f"mcpeek: {option} {path}: {said}\n"
    assert not capture.exists()


@pytest.mark.parametrize(
    ("names", "redact", "said"),
    [
        (["X-Api-Key:"], True, "--redact-header 'X-Api-Key:' is not a header name"),
        (["X-Trace", "X Api Key"], True, "--redact-header 'X Api Key' is not a header name"),
        ([""], True, "--redact-header '' is not a header name"),
        (["X-Api-Key"], False, "--redact-header does nothing with --no-redact"),
    ],
)
def test_a_header_to_redact_that_would_hide_nothing_is_refused(
    names: list[str], redact: bool, said: str, tmp_path: Path
) -> None:
    """Such a name matches no header: the secret the user meant to hide would be
    recorded in the clear. Refused before the capture is opened."""
    capture = tmp_path / "c.jsonl"
    with pytest.raises(UsageError, match="^" + re.escape(said)):
        open_capture(
            capture,
            force=False,
            transport="http",
            target="http://x/mcp",
            redact=redact,
            extra_redacted=names,
        )
    assert not capture.exists()


def test_http_says_so_in_one_line(tmp_path: Path) -> None:
    capture = tmp_path / "c.jsonl"
    proc = subprocess.run(
        mcpeek_argv(
            *[
                "http",
                "--no-tui",
                "--upstream",
                "http://127.0.0.1:1/mcp",
                "--listen",
                "127.0.0.1:0",
            ],
            *["-w", str(capture), "--redact-header", "X-Api-Key:"],
        ),
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,  # (only a bound: a version that took the name proxied until stopped)
    )
    assert proc.returncode == 2
    assert proc.stderr.startswith("mcpeek: --redact-header 'X-Api-Key:' is not a header name")
    assert proc.stderr.count("\n") == 1


@pytest.mark.parametrize("old", [b"x" * 50_000, None])
def test_an_export_that_cannot_be_written_in_full_loses_nothing(
    tmp_path: Path, old: bytes | None
) -> None:
    """A full disk (RLIMIT_FSIZE: writes past 4 KB fail with EFBIG, as with ENOSPC):
    the file --force was to replace stays as it was; a new one is not left half
    written."""
    out = tmp_path / "spans.json"
    if old is not None:
        out.write_bytes(old)
    limit = 4096
    fresh_bytecode()
    proc = subprocess.run(
        mcpeek_argv("export", "--format", "otlp-json", "--force", "-o", str(out), str(CAPTURE)),
        capture_output=True,
        text=True,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit)),
        timeout=120,
    )
    assert proc.returncode == 2
    assert proc.stderr == f"mcpeek: cannot write {out}: File too large\n"
    if old is None:
        assert not out.exists()
    else:
        assert out.read_bytes() == old
    assert [p.name for p in tmp_path.iterdir()] == ([] if old is None else ["spans.json"])


@pytest.mark.parametrize(
    "words", [["lint", str(CAPTURE)], ["show", str(CAPTURE)], ["diff", str(CAPTURE), str(CAPTURE)]]
)
def test_a_closed_standard_output_is_a_failed_write_not_a_traceback(words: list[str]) -> None:
    """``mcpeek lint cap.jsonl >&-``: Python leaves sys.stdout None; the output is
    lost, which must say so (exit 2), as a full disk does."""
    proc = subprocess.run(
        mcpeek_argv(*words),
        stdin=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: os.close(1),
        timeout=60,
    )
    assert proc.returncode == 2
    assert proc.stderr == "mcpeek: cannot write the output: Bad file descriptor\n"


def test_http_with_a_closed_standard_input_runs_headless(tmp_path: Path) -> None:
    """``sys.stdin`` is None when fd 0 is closed: the viewer check asked it isatty()."""

    def closed_stdin() -> None:  # (and SIGINT as a terminal delivers it, to stop it)
        os.close(0)
        signal.signal(signal.SIGINT, signal.SIG_DFL)

    proc = subprocess.Popen(
        mcpeek_argv(
            *["http", "--upstream", "http://127.0.0.1:1/mcp", "--listen", "127.0.0.1:0"],
            *["-w", str(tmp_path / "c.jsonl")],  # no --no-tui: the viewer check runs
        ),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=closed_stdin,  # noqa: PLW1509 (close(), signal(): async-signal-safe)
    )
    try:
        assert proc.stderr is not None
        first = proc.stderr.readline()  # "proxying ..." once it listens, else the failure
        proc.send_signal(signal.SIGINT)
        rest = proc.communicate(timeout=60)[1]
    finally:
        proc.kill()
        proc.wait()
    assert first.startswith("mcpeek: proxying http://127.0.0.1:"), first + rest
    assert "Traceback" not in rest and proc.returncode == 0


def test_a_closed_standard_error_leaves_stdio_transparent(tmp_path: Path) -> None:
    """``2>&-``: Python leaves sys.stderr None. stdio put its messages there (stdout is
    the protocol pipe), and ended with an AttributeError: exit 1, not the server's 0."""
    ping = b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n'
    proc = subprocess.run(
        mcpeek_argv("stdio", "-w", str(tmp_path / "c.jsonl"), "--", "cat"),
        input=ping,
        stdout=subprocess.PIPE,
        preexec_fn=lambda: os.close(2),
        timeout=60,
    )
    assert proc.returncode == 0  # cat's own
    assert proc.stdout == ping  # only the server's bytes: no mcpeek line on the pipe


def test_a_closed_standard_error_keeps_messages_off_the_output(tmp_path: Path) -> None:
    proc = subprocess.run(
        mcpeek_argv("lint", str(tmp_path / "missing.jsonl")),
        stdout=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: os.close(2),
        timeout=60,
    )
    assert proc.returncode == 2
    assert "mcpeek:" not in proc.stdout  # the error line went nowhere, as asked


@pytest.mark.parametrize("old", [b"x" * 100, None])
def test_ctrl_c_while_an_export_is_written_loses_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, old: bytes | None
) -> None:
    from mcpeek.inspector.cli.commands import export

    def interrupted(fd: int, data: bytes) -> None:
        os.write(fd, data[:10])  # part of it, then Ctrl-C
        raise KeyboardInterrupt

    monkeypatch.setattr(export, "write_all", interrupted)
    out = tmp_path / "spans.json"
    if old is not None:
        out.write_bytes(old)
    argv = ["export", "--format", "otlp-json", "--force", "-o", str(out), str(CAPTURE)]
    assert main(argv) == 130
    assert [p.name for p in tmp_path.iterdir()] == ([] if old is None else ["spans.json"])
    if old is not None:
        assert out.read_bytes() == old


def test_serve_strict_without_the_rules_is_refused() -> None:
    """--no-check runs no rule, so --strict could never fail a client: a CI job that
    counts on it would pass whatever the client sends (here: nothing, exit 0)."""
    proc = subprocess.run(
        mcpeek_argv("serve", str(CAPTURE), "--strict", "--no-check"),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert proc.stderr == "mcpeek: --strict needs the rules that --no-check turns off: give one\n"


@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("http://x:70000/mcp", "is not a valid URL: Port out of range"),
        ("http://[::1/mcp", "is not a valid URL"),
        ("http:///mcp", "names no host"),
        ("http://127.0.0.1:0/mcp", "port 0 is no server's port"),
    ],
)
def test_serve_forward_is_checked_as_every_server_url(url: str, said: str) -> None:
    """--forward was only checked for its scheme: these served on, forwarding nowhere."""
    proc = subprocess.run(
        mcpeek_argv("serve", str(CAPTURE), "--forward", url),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"mcpeek: --forward {url!r}") and said in proc.stderr
    assert proc.stderr.count("\n") == 1


def test_no_file_mcpeek_opens_takes_a_closed_standard_descriptor(tmp_path: Path) -> None:
    """With stdin and stdout closed (``<&- >&-``), the next file opened would be fd 0,
    then fd 1: a capture there would take protocol bytes or output meant for the
    terminal. Every command starts with /dev/null on them."""
    code = (
        "import os, sys\n"
        "from mcpeek.inspector.cli.main import standard_streams\n"
        "standard_streams()\n"
        f"fd = os.open({str(tmp_path / 'capture.jsonl')!r}, os.O_WRONLY | os.O_CREAT)\n"
        "print(fd, os.path.realpath(f'/proc/self/fd/0'), file=sys.stderr)\n"
    )

    def close_in_and_out() -> None:
        os.close(0)
        os.close(1)

    proc = subprocess.run(
        [sys.executable, "-c", code],
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=close_in_and_out,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    fd, stdin_is = proc.stderr.split()
    assert int(fd) > 2
    assert stdin_is == os.devnull
