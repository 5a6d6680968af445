"""Line framing of relayed chunks, with no length limit."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from mcpeek.inspector.proxy.tap import LineSplitter, StdioTap
from mcpeek.inspector.records import SeqRecord
from mcpeek.inspector.testing.wire import stream_bytes


@given(st.binary(max_size=2000), st.lists(st.integers(1, 300), min_size=1, max_size=50))
def test_any_chunking_rebuilds_the_stream(data: bytes, cuts: list[int]) -> None:
    records: list[SeqRecord] = []
    tap = StdioTap(records.extend)
    offset = i = 0
    while offset < len(data):
        size = cuts[i % len(cuts)]
        tap.data("s2c", data[offset : offset + size])
        offset += size
        i += 1
    tap.eof("s2c")
    assert stream_bytes(records, "s2c") == data  # type: ignore[arg-type]
    assert len(records) == data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)


def test_a_huge_line_in_many_pieces_is_one_line() -> None:
    splitter = LineSplitter()
    piece = b"a" * 65536
    for _ in range(300):  # ~19 MB, far past the classic 64 KiB limit
        assert splitter.feed(piece) == []
    assert splitter.pending == 300 * 65536
    (line,) = splitter.feed(b"end\nnext")
    assert len(line) == 300 * 65536 + 3
    assert splitter.finish() == b"next"
    assert splitter.finish() is None
