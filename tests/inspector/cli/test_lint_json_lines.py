"""``lint --format json`` writes each line as ``json`` encodes its object, byte for byte,
whatever the violation's text holds (the writer puts plain lines together itself)."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from mcpeek.inspector.cli.lint_report import JsonLines
from mcpeek.inspector.records import Record
from mcpeek.inspector.views.findings import lint_json
from mcpeek.rules.engine import Reported

CAPTURE = Path(__file__).resolve().parents[3] / "captures" / "modern-stdio.jsonl"
MESSAGES = [
    "result for tools/call (id 3) has no serverInfo",
    'a "quoted" name',
    "a back\\slash",
    "a tab\there, a newline\nthere",
    "\x7f and \x00",
    "shortened…",
    "naïve ünïcode — 日本",
    "a lone surrogate \udc80",
    "",
]


def violation(message: str, **fields: object) -> Reported:
    values: dict[str, object] = {
        "rule": "meta.server-info-missing",
        "severity": "warning",
        "msgs": [7, 8],
        "message": message,
        "spec": "https://modelcontextprotocol.io/specification/2026-07-28/basic/index#meta",
    }
    values.update(fields)
    return Reported(**values)  # type: ignore[arg-type]


def written(path: str, violations: list[Reported]) -> list[str]:
    out = io.StringIO()
    lines = JsonLines(out)
    lines.start(path)
    for v in violations:
        lines.add(v)
    lines.flush()
    return out.getvalue().splitlines(keepends=True)


def expected(path: str, violations: list[Reported]) -> list[str]:
    encode = json.JSONEncoder(ensure_ascii=False).encode
    return [encode(lint_json(path, v)) + "\n" for v in violations]


@pytest.mark.parametrize("message", MESSAGES)
def test_each_line_is_what_json_writes(message: str) -> None:
    found = [violation(message), violation(message, msgs=[]), violation(message, msgs=[1])]
    for path in ("caps/a.jsonl", 'odd "dir"/é.jsonl'):
        assert written(path, found) == expected(path, found)


def test_odd_parts_are_written_by_the_encoder_alike() -> None:
    found = [
        violation("x", made="fault"),  # a line with one more member
        violation("x", spec=""),
        violation("x", rule='odd "rule"', severity="info"),
        violation("x", msgs=[True]),  # (not an int: the encoder's true)
    ]
    assert written("a.jsonl", found) == expected("a.jsonl", found)
    assert '"made": "fault"' in written("a.jsonl", found)[0]


class Watched(io.StringIO):
    """Standard output that notes, at each write, how many records the capture's
    reader had handed out by then."""

    def __init__(self, reader_class: type) -> None:
        super().__init__()
        self.reader_class = reader_class
        self.read_when_written: list[int] = []

    def write(self, text: str) -> int:
        self.read_when_written.append(self.reader_class.handed_out)
        return super().write(text)


def test_lines_are_written_as_violations_are_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Lint holds no finding in memory for JSON lines: the first line is out long
    before the capture has been read to its end."""
    from mcpeek.inspector.capture import reader as reader_module
    from mcpeek.inspector.cli.main import main

    capture = tmp_path / "many.jsonl"
    capture.write_bytes(
        CAPTURE.read_bytes().splitlines(keepends=True)[0]
        + b"".join(unanswered(n) for n in range(1, 2001))
    )

    class CountingReader(reader_module.CaptureReader):
        handed_out = 0

        def stream(self, *args: object, **kwargs: object) -> Iterator[Record]:
            for record in super().stream(*args, **kwargs):  # type: ignore[arg-type]
                CountingReader.handed_out += 1
                yield record

    monkeypatch.setattr("mcpeek.inspector.cli.commands.lint.CaptureReader", CountingReader)
    out = Watched(CountingReader)
    monkeypatch.setattr("sys.stdout", out)
    assert main(["lint", "--format", "json", str(capture)]) == 1
    lines = out.getvalue().splitlines()
    assert len(lines) >= 1000
    assert all(json.loads(line)["file"] == str(capture) for line in lines)
    assert out.read_when_written[0] < CountingReader.handed_out / 2


def unanswered(n: int) -> bytes:
    """A client's request that breaks a rule at once: a tools/call with no name."""
    text = json.dumps({"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {}})
    record = {"k": "msg", "seq": n, "t": float(n), "dir": "c2s", "ch": "stdio", "raw": text}
    return (json.dumps(record) + "\n").encode()


class Writes(io.StringIO):
    """Standard output that keeps the size of each write."""

    def __init__(self) -> None:
        super().__init__()
        self.sizes: list[int] = []

    def write(self, text: str) -> int:
        self.sizes.append(len(text))
        return super().write(text)


def test_lines_are_written_in_batches_and_none_is_lost() -> None:
    """One write per batch of lines, not one per line (a system call per finding when
    Python's output is unbuffered), each no bigger than a batch and a line; the lines
    held at the end are written by flush, and the text is what one write per line gave."""
    found = [violation(f"finding {n}", msgs=[n]) for n in range(3000)]
    out = Writes()
    lines = JsonLines(out)
    lines.start("a.jsonl")
    for v in found:
        lines.add(v)
    held = out.getvalue()
    lines.flush()
    assert out.getvalue().splitlines(keepends=True) == expected("a.jsonl", found)
    longest = max(len(line) for line in expected("a.jsonl", found))
    assert 1 < len(out.sizes) < len(found) / 100
    assert max(out.sizes) < JsonLines.BATCH + longest
    assert len(held) < len(out.getvalue())  # the last lines waited for flush


class Broken(io.StringIO):
    def write(self, text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")


def test_a_failed_write_is_kept_and_ends_the_writing() -> None:
    lines = JsonLines(Broken())
    lines.start("a.jsonl")
    for n in range(1000):
        lines.add(violation(f"finding {n}"))
    lines.flush()
    assert isinstance(lines.error, BrokenPipeError)
    assert not lines._held  # nothing piles up after the reader has gone


def test_each_capture_s_lines_are_out_before_the_next_is_linted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """lint of two captures: the first one's lines are written before the second one
    is read (so they come before anything said of it), though both hold few lines."""
    from mcpeek.inspector.capture import reader as reader_module
    from mcpeek.inspector.cli.main import main

    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    header = CAPTURE.read_bytes().splitlines(keepends=True)[0]
    first.write_bytes(header + unanswered(1))
    second.write_bytes(b"not a capture\n")
    out = io.StringIO()
    opened: list[str] = []  # what was written when each capture was opened

    class NotingReader(reader_module.CaptureReader):
        def __init__(self, path: Path, *args: object, **kwargs: object) -> None:
            opened.append(out.getvalue())
            super().__init__(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr("mcpeek.inspector.cli.commands.lint.CaptureReader", NotingReader)
    monkeypatch.setattr("sys.stdout", out)
    assert main(["lint", "--format", "json", str(first), str(second)]) == 2
    assert opened[0] == ""
    written_then = opened[1].splitlines()
    assert written_then
    assert {json.loads(line)["file"] for line in written_then} == {str(first)}
