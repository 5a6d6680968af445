"""Damaged gzip captures: the records before the damage are read, the damage is noted."""

from __future__ import annotations

import contextlib
import gzip
import zlib
from pathlib import Path

import pytest

from mcpeek.inspector.capture import CaptureError, CaptureReader, CaptureWriter, read_records
from mcpeek.inspector.records import AnyRecord, Msg
from mcpeek.inspector.testing.records import RecordBuilder

GZIP_HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"  # deflate, no flags, no mtime
BAD_BLOCK = b"\x06" + b"\xa5" * 64  # a deflate block of the reserved type 3: corrupt


def capture(tmp_path: Path, flows: int = 300) -> tuple[bytes, list[AnyRecord]]:
    """A plain capture of ``flows`` tool calls (lines of a few hundred bytes each)."""
    b = RecordBuilder()
    for i in range(flows):
        b.request("tools/call", {"name": "get_weather", "arguments": {"city": f"c{i}" * 50}})
        b.result(i + 1, {"content": [{"type": "text", "text": f"sunny {i} " * 40}]})
    path = b.save(tmp_path / "c.jsonl")
    _, records, problems = read_records(path)
    assert problems == [] and len(records) == 2 * flows
    return path.read_bytes(), records


def corrupt_after(data: bytes, cut: int) -> bytes:
    """``data`` gzipped so that its deflate stream is intact up to ``cut``, corrupt after."""
    deflate = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    good = deflate.compress(data[:cut]) + deflate.flush(zlib.Z_FULL_FLUSH)
    return GZIP_HEADER + good + BAD_BLOCK


def test_truncated_gzip_yields_every_complete_line(tmp_path: Path) -> None:
    plain, originals = capture(tmp_path)
    data = gzip.compress(plain, mtime=0)
    gz = tmp_path / "c.jsonl.gz"
    gz.write_bytes(data[: len(data) * 9 // 10])
    inflate = zlib.decompressobj(wbits=31)
    complete_lines = inflate.decompress(gz.read_bytes()).count(b"\n")  # header included
    assert complete_lines > len(originals) * 3 // 4  # the premise: most of it survives

    _, records, problems = read_records(gz)

    assert records == originals[: complete_lines - 1]
    assert problems[0].startswith("read stopped: truncated compressed file")
    assert len(problems) <= 2
    assert all(p.startswith(f"line {complete_lines + 1}: incomplete") for p in problems[1:])


@pytest.mark.parametrize("line", [2, 40, 450])  # in the first gzip read, or well past it
def test_corrupt_gzip_yields_the_records_before_the_damage(tmp_path: Path, line: int) -> None:
    plain, originals = capture(tmp_path)
    # The damage is 100 bytes into line ``line`` (1-based, the header is line 1).
    line_start = sum(len(x) + 1 for x in plain.split(b"\n")[: line - 1])
    gz = tmp_path / "c.jsonl.gz"
    gz.write_bytes(corrupt_after(plain, line_start + 100))
    with pytest.raises(zlib.error):
        gzip.decompress(gz.read_bytes())  # the premise: what used to escape records()

    reader = CaptureReader(gz)
    records = list(reader.records())

    assert records == originals[: line - 2]
    assert reader.problems[0] == (
        "read stopped: corrupt compressed data "
        "(Error -3 while decompressing data: invalid block type)"
    )
    # The read that meets the damage loses what it decompressed: only part of line
    # ``line`` (reads are smaller than its 100 bytes then), never a whole line.
    assert len(reader.problems) == 2
    assert reader.problems[1].startswith(f"line {line}: incomplete last line")


def test_gzip_corrupt_before_the_header_is_refused_clearly(tmp_path: Path) -> None:
    plain, _ = capture(tmp_path, flows=3)
    gz = tmp_path / "c.jsonl.gz"
    gz.write_bytes(corrupt_after(plain, 0))
    with pytest.raises(CaptureError, match=r"c\.jsonl\.gz: cannot read: corrupt compressed data"):
        read_records(gz)


@pytest.mark.parametrize("keep", [5, 12, 20])
def test_gzip_truncated_before_the_header_is_refused_clearly(tmp_path: Path, keep: int) -> None:
    plain, _ = capture(tmp_path, flows=3)
    gz = tmp_path / "c.jsonl.gz"
    gz.write_bytes(gzip.compress(plain, mtime=0)[:keep])
    with pytest.raises(CaptureError, match="cannot read: truncated compressed file"):
        read_records(gz)


def test_flipped_bytes_anywhere_never_escape_as_raw_errors(tmp_path: Path) -> None:
    plain, _ = capture(tmp_path, flows=20)
    data = gzip.compress(plain, mtime=0)
    gz = tmp_path / "c.jsonl.gz"
    inflate_errors = 0
    for offset in range(10, len(data), 23):
        damaged = bytearray(data)
        damaged[offset : offset + 8] = bytes(b ^ 0xFF for b in damaged[offset : offset + 8])
        gz.write_bytes(damaged)
        try:
            gzip.decompress(damaged)
        except zlib.error:
            inflate_errors += 1
        except (OSError, EOFError):
            pass
        with contextlib.suppress(CaptureError):  # a damaged header: a clear refusal
            read_records(gz)  # else records, with bad lines and the damage in problems
    assert inflate_errors  # the premise: some of these damage the deflate stream itself


def test_gzip_data_in_a_file_not_named_gz_is_read(tmp_path: Path) -> None:
    data, records = capture(tmp_path, flows=3)
    disguised = tmp_path / "d.jsonl"
    disguised.write_bytes(gzip.compress(data))
    _, read, problems = read_records(disguised)
    assert read == records and problems == []


def test_a_plain_capture_named_gz_is_read_as_it_is(tmp_path: Path) -> None:
    # `mcpeek stdio -w out.jsonl.gz` writes plain JSON Lines: the content decides.
    path = tmp_path / "out.jsonl.gz"
    with CaptureWriter(path, transport="stdio", target=["srv"]) as writer:
        writer.write(Msg(dir="c2s", ch="stdio", raw='{"jsonrpc":"2.0","id":1,"method":"ping"}'))
    header, records, problems = read_records(path)
    assert header.transport == "stdio" and len(records) == 1 and problems == []
