"""The capture reader on lines it cannot decode: noted as problems, never raised."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from mcpeek.inspector.capture import CaptureError, CaptureReader, read_records
from mcpeek.inspector.records import Msg

HEADER = b'{"k":"header","format":"mcpeek-capture","v":1,"transport":"stdio"}\n'


def msg_line(seq: int, raw: str, extra: str = "") -> bytes:
    text = msgspec.json.encode(raw).decode()
    return (
        f'{{"k":"msg","seq":{seq},"t":1.0,"dir":"c2s","ch":"stdio","raw":{text}{extra}}}\n'.encode()
    )


def test_a_record_line_nested_too_deep_is_a_problem_and_the_rest_is_read(tmp_path: Path) -> None:
    deep_list = "[" * 5000 + "]" * 5000
    deep_object = '{"a":' * 5000 + "1" + "}" * 5000
    ping = '{"jsonrpc":"2.0","id":1,"method":"ping"}'
    path = tmp_path / "deep.jsonl"
    path.write_bytes(
        HEADER
        + msg_line(1, ping)
        + msg_line(2, ping, f',"x":{deep_list}')  # an unknown member, too deep to skip
        + msg_line(3, "{}", f',"x":{deep_object}')
        + msg_line(4, ping)
    )
    _header, records, problems = read_records(path)
    assert [r.seq for r in records if isinstance(r, Msg)] == [1, 4]
    assert problems == [
        "line 3: bad record: JSON nested too deeply",
        "line 4: bad record: JSON nested too deeply",
    ]


def test_a_record_whose_base64_does_not_decode_is_a_problem(tmp_path: Path) -> None:
    """Read as no bytes, it was an empty line, and lint flagged a blank line the
    traffic never held: it is a bad record, and the good Base64 beside it is read."""
    path = tmp_path / "b64.jsonl"
    bad = b'{"k":"msg","seq":2,"t":1.0,"dir":"c2s","ch":"stdio","raw_b64":"!!!notb64"}\n'
    good = b'{"k":"msg","seq":3,"t":1.0,"dir":"c2s","ch":"stdio","raw_b64":"/w=="}\n'
    # Both given: "raw" is what is read, as before.
    both = b'{"k":"msg","seq":4,"t":1.0,"dir":"c2s","ch":"stdio","raw":"{}","raw_b64":"!"}\n'
    path.write_bytes(HEADER + msg_line(1, "{}") + bad + good + both)
    _header, records, problems = read_records(path)
    assert [r.seq for r in records if isinstance(r, Msg)] == [1, 3, 4]
    assert problems == ["line 3: bad record: raw_b64 is not Base64"]


def test_a_raw_message_nested_too_deep_is_read_as_it_is(tmp_path: Path) -> None:
    deep = "[" * 5000 + "]" * 5000
    path = tmp_path / "deep.jsonl"
    path.write_bytes(HEADER + msg_line(1, deep))
    _header, records, problems = read_records(path)
    assert problems == []
    assert [r.raw for r in records if isinstance(r, Msg)] == [deep]


def test_a_byte_order_mark_before_the_header_is_ignored(tmp_path: Path) -> None:
    """An editor may save a capture with a UTF-8 BOM; RFC 8259 section 8.1 lets a
    parser ignore it, and the records after it are all read."""
    ping = '{"jsonrpc":"2.0","id":1,"method":"ping"}'
    path = tmp_path / "bom.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + HEADER + msg_line(1, ping))
    header, records, problems = read_records(path)
    assert header.transport == "stdio"
    assert [r.raw for r in records if isinstance(r, Msg)] == [ping]
    assert problems == []


def test_a_capture_saved_as_utf16_says_so(tmp_path: Path) -> None:
    path = tmp_path / "utf16.jsonl"
    path.write_bytes((HEADER.decode() + "\n").encode("utf-16"))  # a BOM first, as editors do
    with pytest.raises(CaptureError, match="saved as UTF-16 text"):
        read_records(path)


def test_a_capture_renamed_before_it_is_opened_is_read_by_its_new_name(tmp_path: Path) -> None:
    beside, final = tmp_path / ".c.jsonl.new", tmp_path / "c.jsonl"
    final.write_bytes(HEADER + msg_line(1, '"old"'))  # the capture it replaces, still there
    beside.write_bytes(HEADER + msg_line(1, '"new"'))
    reader = CaptureReader(beside, renamed_to=final)
    beside.replace(final)  # (as the writer's commit does, before the reader opens it)
    assert [r.raw for r in reader.records() if isinstance(r, Msg)] == ['"new"']
    assert reader.path == final


def test_a_capture_still_under_its_first_name_is_read_there(tmp_path: Path) -> None:
    beside, final = tmp_path / ".c.jsonl.new", tmp_path / "c.jsonl"
    final.write_bytes(HEADER + msg_line(1, '"old"'))
    beside.write_bytes(HEADER + msg_line(1, '"new"'))
    reader = CaptureReader(beside, renamed_to=final)
    assert [r.raw for r in reader.records() if isinstance(r, Msg)] == ['"new"']
    with pytest.raises(CaptureError, match="no such file"):  # (gone, and no new name)
        list(CaptureReader(tmp_path / "gone.jsonl").records())
