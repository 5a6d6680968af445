"""Bad input to ``mcpeek export``: exit 2 and one line ``mcpeek: …``, never a traceback."""

from __future__ import annotations

import json
import socket
import subprocess
from pathlib import Path

import pytest

from mcpeek.inspector.cli.main import main
from mcpeek.inspector.export import endpoint
from tests.conftest import mcpeek_argv
from tests.inspector.export.conftest import CAPTURES


def one_line_error(args: list[str]) -> str:
    done = subprocess.run(mcpeek_argv(*args), capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, (done.stdout, done.stderr)
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("mcpeek: "), done.stderr
    assert done.stdout == ""
    return lines[0]


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])  # closed again: nothing listens there


def test_har_of_a_stdio_capture() -> None:
    line = one_line_error(["export", str(CAPTURES / "modern-stdio.jsonl"), "--format", "har"])
    assert "stdio capture" in line and "mcpeek http" in line


@pytest.mark.parametrize("fmt", ["har", "otlp-json"])
def test_not_a_capture(fmt: str, tmp_path: Path) -> None:
    other = tmp_path / "notes.txt"
    other.write_text("hello\n")
    assert "not an mcpeek capture" in one_line_error(["export", str(other), "--format", fmt])
    assert "notes" in one_line_error(["export", str(tmp_path / "notes"), "--format", fmt])


@pytest.mark.parametrize("scheme", ["http", "grpc"])
def test_an_unreachable_endpoint(scheme: str) -> None:
    url = f"{scheme}://127.0.0.1:{closed_port()}"
    line = one_line_error(
        [
            "export",
            str(CAPTURES / "modern-stdio.jsonl"),
            "--format",
            "otlp",
            "--endpoint",
            url,
            "--send-timeout",
            "1",
        ]
    )
    assert f"cannot send to the OTLP endpoint {url}" in line and "spans not sent" in line


@pytest.mark.parametrize(
    ("more", "said"),
    [
        (["--format", "otlp"], "needs --endpoint"),
        (["--format", "otlp", "--endpoint", "ftp://x:1"], "scheme"),
        (["--format", "otlp", "--endpoint", "http://x:99999"], "bad OTLP endpoint"),
        (["--format", "har", "--endpoint", "http://x:1"], "--endpoint goes with"),
        (["--format", "har", "--send-timeout", "5"], "--send-timeout goes with --format otlp"),
        (["--format", "otlp-json", "--send-timeout", "5"], "--send-timeout goes with"),
        (["--format", "otlp", "--endpoint", "http://x:1", "-o", "f"], "-o goes with"),
        (["--format", "har", "--timeout", "nan"], "--timeout"),
    ],
)
def test_bad_options(more: list[str], said: str) -> None:
    assert said in one_line_error(["export", str(CAPTURES / "modern-http-sse.jsonl"), *more])


def test_without_the_otel_extra(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    real = endpoint.importlib.util.find_spec

    def hidden(name: str, package: str | None = None) -> object:
        return None if name.startswith("opentelemetry") else real(name, package)

    monkeypatch.setattr(endpoint.importlib.util, "find_spec", hidden)
    code = main(["export", str(CAPTURES / "modern-stdio.jsonl"), "--format", "otlp-json"])
    assert code == 2
    err = capsys.readouterr().err.splitlines()
    hint = "pip install '.[otel]' in mcpeek's clone"
    assert err == [f"mcpeek: OTLP export needs the otel extra: {hint}"]


@pytest.mark.parametrize("shift", [-1e11, -1.8e9, 1e11])  # before 1970, or past 2554
@pytest.mark.parametrize("fmt", ["otlp-json", "otlp"])
def test_times_otlp_cannot_carry(shift: float, fmt: str, tmp_path: Path) -> None:
    """A capture whose times were shifted out of OTLP's range is refused in one line by
    both OTLP formats (otlp-json used to end in a protobuf ``ValueError`` traceback)."""
    lines = (CAPTURES / "modern-stdio.jsonl").read_text().splitlines()
    shifted = [lines[0]]
    for line in lines[1:]:
        record = json.loads(line)
        record["t"] += shift
        shifted.append(json.dumps(record))
    odd = tmp_path / "odd.jsonl"
    odd.write_text("\n".join(shifted) + "\n")
    where = ["--endpoint", f"http://127.0.0.1:{closed_port()}"] if fmt == "otlp" else []
    line = one_line_error(["export", str(odd), "--format", fmt, *where])
    assert "OTLP cannot carry" in line and "1970" in line
    assert not (tmp_path / "odd.json").exists()


def test_output_onto_the_capture_read_names_the_flag_o(tmp_path: Path) -> None:
    capture = tmp_path / "self.jsonl"
    capture.write_bytes((CAPTURES / "modern-stdio.jsonl").read_bytes())
    line = one_line_error(["export", str(capture), "--format", "otlp-json", "-o", str(capture)])
    assert line.startswith(f"mcpeek: -o {capture} is the capture being read"), line
    assert capture.read_bytes() == (CAPTURES / "modern-stdio.jsonl").read_bytes()


def test_output_into_a_missing_directory_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "nonexistent" / "x.har"
    line = one_line_error(
        ["export", str(CAPTURES / "modern-http-sse.jsonl"), "--format", "har", "-o", str(out)]
    )
    assert line == f"mcpeek: cannot write {out}: no directory {out.parent}"
    assert not out.parent.exists()


@pytest.mark.parametrize("fmt", ["har", "otlp-json"])
def test_times_past_any_date_are_refused_not_made_up(fmt: str, tmp_path: Path) -> None:
    """Times near the float's limits: otlp-json used to overflow converting them to
    nanoseconds; HAR wrote a made-up 1970 date and an 'Infinity' that is no JSON."""
    lines = (CAPTURES / "modern-http-sse.jsonl").read_text().splitlines()
    odd_lines = [lines[0]]
    for number, line in enumerate(lines[1:]):
        record = json.loads(line)
        record["t"] = 1.7e308 if number % 2 else -1.7e308
        odd_lines.append(json.dumps(record))
    odd = tmp_path / "odd.jsonl"
    odd.write_text("\n".join(odd_lines) + "\n")
    line = one_line_error(["export", str(odd), "--format", fmt])
    assert "cannot carry" in line and "e+308" in line, line
