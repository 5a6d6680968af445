"""Capture files: the writer/reader round trip, damaged files, versions, follow mode."""

from __future__ import annotations

import gzip
import hashlib
import threading
import time
from pathlib import Path

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from multidict import CIMultiDict

from mcpeek.inspector.capture import CaptureError, CaptureReader, CaptureWriter, read_records
from mcpeek.inspector.records import (
    Event,
    Http,
    Msg,
    Stderr,
    Violation,
    header_bytes,
    text_fields,
    wire_bytes,
)


def write(path: Path, records: list, **kw: object) -> None:
    with CaptureWriter(path, transport="stdio", target=["srv"], **kw) as writer:
        for record in records:
            writer.write(record)


def test_round_trip_of_every_kind(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    originals = [
        Event(event="spawn", pid=42),
        Msg(dir="c2s", ch="stdio", raw='{"jsonrpc":"2.0","id":1,"method":"ping"}'),
        Msg(dir="s2c", ch="stdio", raw_b64="//4="),
        Stderr(raw="log line"),
        Http(
            x="x1",
            phase="request",
            method="POST",
            path="/mcp",
            headers=[("Content-Type", "application/json")],
        ),
        Http(x="x1", phase="end", reason="complete"),
        Violation(rule="jsonrpc.version", severity="error", msgs=[2], message="m", spec="u"),
        Event(event="exit", code=0),
    ]
    write(path, originals)
    header, records, problems = read_records(path)
    assert problems == []
    assert header.format == "mcpeek-capture" and header.v == 1 and header.target == ["srv"]
    assert [r.seq for r in records] == list(range(1, 9))
    assert all(r.t > 1_600_000_000 for r in records)
    assert [type(r) for r in records] == [type(r) for r in originals]
    assert records[4].headers == [("content-type", "application/json")]  # names lower-cased
    assert wire_bytes(records[2]) == b"\xff\xfe"


def test_file_layout_matches_the_format(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    write(path, [Msg(dir="c2s", ch="stdio", raw="{}")])
    lines = path.read_bytes().split(b"\n")
    assert lines[-1] == b"" and len(lines) == 3
    header = msgspec.json.decode(lines[0])
    assert list(header)[:3] == ["k", "format", "v"] and header["redacted"] is True
    msg = msgspec.json.decode(lines[1])
    assert list(msg) == ["k", "seq", "t", "dir", "ch", "raw"]


def test_secret_headers_are_redacted_unless_asked(tmp_path: Path) -> None:
    headers = [("Authorization", "Bearer s3cret"), ("X-Custom-Token", "abc"), ("Accept", "*/*")]
    redacted = tmp_path / "r.jsonl"
    write(
        redacted,
        [Http(x="x1", phase="request", headers=list(headers))],
        extra_redacted=["x-custom-token"],
    )
    text = redacted.read_text()
    assert "s3cret" not in text and "abc" not in text
    _, records, _ = read_records(redacted)
    values = dict(records[0].headers)
    assert values["authorization"].startswith("<redacted sha256:")
    assert len(values["authorization"]) == len("<redacted sha256:12345678>")
    assert values["accept"] == "*/*"
    plain = tmp_path / "p.jsonl"
    write(plain, [Http(x="x1", phase="request", headers=list(headers))], redact=False)
    assert "Bearer s3cret" in plain.read_text()
    assert read_records(plain)[0].redacted is False


def aiohttp_decoded(data: bytes) -> str:
    """A header value as aiohttp's parsers hand it over."""
    return data.decode("utf-8", "surrogateescape")


WEIRD_HEADERS = [
    (b"Content-Type", b"application/json"),
    (b"X-Weird", b"\xff\xfe"),
    (b"Set-Cookie", b"a=1"),
    (b"Set-Cookie", b"b=\xe9"),
    (b"X-Caf\xc3\xa9", b"caf\xc3\xa9"),  # valid UTF-8 stays text
]


@pytest.mark.parametrize("redact", [True, False])
def test_header_values_that_are_not_utf8_are_kept_exactly(tmp_path: Path, redact: bool) -> None:
    path = tmp_path / "h.jsonl"
    headers = [(aiohttp_decoded(n), aiohttp_decoded(v)) for n, v in WEIRD_HEADERS]
    write(
        path,
        [Http(x="x1", phase="response", status=200, headers=headers), Event(event="note")],
        redact=redact,
    )
    _, records, problems = read_records(path)
    assert problems == []
    response, note = records  # neither the record nor the one after it is lost
    assert isinstance(response, Http) and response.status == 200 and note.seq == 2
    assert [n for n, _ in response.headers] == [
        "content-type",
        "x-weird",
        "set-cookie",
        "set-cookie",
        "x-café",
    ]
    exact = header_bytes(response)
    assert exact[1] == ("x-weird", b"\xff\xfe")
    assert exact[4] == ("x-café", "café".encode())
    if redact:
        # the hash is of the wire bytes, and a redacted value is plain text again
        digest = hashlib.sha256(b"b=\xe9").hexdigest()[:8]
        assert response.headers[3] == ("set-cookie", f"<redacted sha256:{digest}>")
        assert response.headers_b64 == [1]
    else:
        assert exact == [(n.decode().lower(), v) for n, v in WEIRD_HEADERS]
        assert response.headers_b64 == [1, 3]
    assert response.headers[1] == ("x-weird", "//4=")  # the Base64 of the exact bytes


def test_headers_with_nothing_to_redact_still_keep_odd_bytes(tmp_path: Path) -> None:
    # No credential header and no secret: the redactor's cheap path, which must
    # still leave the Base64 storing to the writer for a value that is not UTF-8.
    path = tmp_path / "h.jsonl"
    plain = [h for h in WEIRD_HEADERS if h[0] != b"Set-Cookie"]
    headers = [(aiohttp_decoded(n), aiohttp_decoded(v)) for n, v in plain]
    write(path, [Http(x="x1", phase="response", status=200, headers=headers)])
    (back,) = read_records(path)[1]
    assert back.headers_b64 == [1]
    assert header_bytes(back) == [(n.decode().lower(), v) for n, v in plain]


def test_the_same_header_names_with_a_secret_value_are_redacted(tmp_path: Path) -> None:
    # What a recording remembers about a list of header names must not stand for
    # the values: the second request, with a token in a plain header, is redacted.
    path = tmp_path / "h.jsonl"
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0" * 2
    names = ("Accept", "X-Trace")
    write(
        path,
        [
            Http(x=f"x{i}", phase="request", headers=list(zip(names, ("*/*", value), strict=True)))
            for i, value in enumerate(("abc", token))
        ],
    )
    first, second = read_records(path)[1]
    assert first.headers == [("accept", "*/*"), ("x-trace", "abc")]
    assert second.headers[1][1].startswith("<redacted sha256:")


def test_aiohttp_header_names_are_recorded_without_redaction(tmp_path: Path) -> None:
    # aiohttp hands over ``istr`` names, which msgspec cannot encode: the records
    # (and the messages written with them) were lost with --no-redact.
    path = tmp_path / "n.jsonl"
    headers = CIMultiDict([("Content-Type", "application/json"), ("Mcp-Session-Id", "S1")])
    write(
        path,
        [Http(x="x1", phase="response", status=200, headers=list(headers.items()))],
        redact=False,
    )
    (back,) = read_records(path)[1]
    assert back.headers == [("content-type", "application/json"), ("mcp-session-id", "S1")]


def test_headers_already_in_base64_are_redacted_by_their_bytes(tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    stored = Http(
        x="x1",
        phase="request",
        headers=[("Accept", "*/*"), ("Authorization", "/w==")],
        headers_b64=[1],
    )
    write(path, [stored])
    (back,) = read_records(path)[1]
    digest = hashlib.sha256(b"\xff").hexdigest()[:8]
    assert back.headers == [("accept", "*/*"), ("authorization", f"<redacted sha256:{digest}>")]
    assert back.headers_b64 is None


def test_truncated_last_line_is_ignored(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    write(path, [Msg(dir="c2s", ch="stdio", raw="a"), Msg(dir="c2s", ch="stdio", raw="b")])
    data = path.read_bytes()
    path.write_bytes(data[:-10])  # cut into the last record
    _, records, problems = read_records(path)
    assert [r.raw for r in records] == ["a"]
    assert len(problems) == 1 and "incomplete last line" in problems[0]


def test_bad_lines_unknown_kinds_and_fields_are_skipped(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    write(path, [Msg(dir="c2s", ch="stdio", raw="a")])
    with path.open("ab") as f:
        f.write(b'{"k":"future-kind","seq":2,"t":1.0,"whatever":1}\n')
        f.write(b'{"k":"msg","seq":3,"t":1.0,"dir":"s2c","ch":"stdio","raw":"b","new":true}\n')
        f.write(b"garbage\n")
        f.write(b'{"k":"msg","seq":"x"}\n')
    _, records, problems = read_records(path)
    assert [r.raw for r in records] == ["a", "b"]
    assert len(problems) == 2 and "line 5" in problems[0] and "line 6" in problems[1]


def test_newer_version_is_refused_clearly(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    path.write_text('{"k":"header","format":"mcpeek-capture","v":2}\n')
    with pytest.raises(CaptureError, match="version 2 is newer than this mcpeek reads"):
        read_records(path)


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"", "empty file"),
        (b'{"hello":1}\n', "not an mcpeek capture"),
        (b"\x00\x01binary", "no complete line, not an mcpeek capture"),
        (b'{"k":"header","format":"mcpeek-capture","v":1', "no complete line"),
        (b"\x00" * (3 << 20), r"no line end in its first 1 MiB"),  # /dev/zero, in short
        (b'{"k":"header","format":"mcpeek-capture","v":0}\n', "version 0 does not exist"),
    ],
)
def test_not_a_capture(tmp_path: Path, content: bytes, reason: str) -> None:
    path = tmp_path / "c.jsonl"
    path.write_bytes(content)
    with pytest.raises(CaptureError, match=reason):
        read_records(path)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(CaptureError, match="no such file"):
        read_records(tmp_path / "nope.jsonl")


def test_gzip_capture(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    write(path, [Msg(dir="c2s", ch="stdio", raw="a")])
    gz = tmp_path / "c.jsonl.gz"
    gz.write_bytes(gzip.compress(path.read_bytes()))
    assert [r.raw for r in read_records(gz)[1]] == ["a"]


def test_each_record_is_in_the_file_once_written(tmp_path: Path) -> None:
    """No buffer in the process: a proxy killed right after writing loses nothing (#21.9)."""
    path = tmp_path / "c.jsonl"
    writer = CaptureWriter(path, transport="stdio", target=["s"])
    writer.write(Msg(dir="c2s", ch="stdio", raw="x" * 1000))
    assert path.read_bytes().endswith(b"\n") and path.read_bytes().count(b"\n") == 2
    writer.write_many([Msg(dir="s2c", ch="stdio", raw="y"), Msg(dir="s2c", ch="stdio", raw="z")])
    assert [r.raw for r in read_records(path)[1]] == ["x" * 1000, "y", "z"]
    writer.close()


def test_follow_sees_records_appended_by_another_writer(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    writer = CaptureWriter(path, transport="stdio", target=["s"])
    seen: list[str] = []
    done = threading.Event()

    def follow() -> None:
        reader = CaptureReader(path)
        for record in reader.records(follow=True, stop=done.is_set, poll_interval=0.01):
            seen.append(record.raw)

    thread = threading.Thread(target=follow)
    thread.start()
    for i in range(5):
        writer.write(Msg(dir="c2s", ch="stdio", raw=str(i)))
        time.sleep(0.02)
    deadline = time.monotonic() + 5
    while len(seen) < 5 and time.monotonic() < deadline:
        time.sleep(0.01)
    done.set()
    thread.join(5)
    writer.close()
    assert seen == ["0", "1", "2", "3", "4"]


def test_follow_waits_for_the_rest_of_a_torn_line(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    write(path, [])
    line = b'{"k":"msg","seq":1,"t":1.0,"dir":"c2s","ch":"stdio","raw":"whole"}\n'
    with path.open("ab") as f:
        f.write(line[:20])
        f.flush()
        reader = CaptureReader(path)
        records = reader.records(follow=True, poll_interval=0.01, idle_timeout=2)
        timer = threading.Timer(0.2, lambda: (f.write(line[20:]), f.flush()))
        timer.start()
        first = next(records)
        timer.join()
    assert first.raw == "whole"


raw_lines = st.binary(max_size=200).filter(lambda b: b"\n" not in b)


@given(st.lists(raw_lines | st.text(max_size=50).map(str.encode), max_size=20))
@settings(max_examples=100, deadline=None)
def test_round_trip_any_bytes(tmp_path_factory: pytest.TempPathFactory, lines: list[bytes]) -> None:
    path = tmp_path_factory.mktemp("rt") / "c.jsonl"
    records = []
    for line in lines:
        raw, raw_b64 = text_fields(line)
        records.append(Msg(dir="s2c", ch="stdio", raw=raw, raw_b64=raw_b64))
    write(path, records)
    _, back, problems = read_records(path)
    assert problems == []
    assert [wire_bytes(r) for r in back] == lines
