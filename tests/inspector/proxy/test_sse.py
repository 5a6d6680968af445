"""The SSE parser: any chunking and any line ends give the same events."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcpeek.inspector.proxy.sse import SseParser

datas = st.lists(
    st.text(
        alphabet=st.characters(blacklist_characters="\r\n", blacklist_categories=("Cs",)),
        max_size=20,
    ),
    min_size=1,
    max_size=3,
)
events = st.lists(
    st.tuples(datas, st.sampled_from([None, "message", "x"]), st.booleans()), max_size=6
)


def render(items: list[tuple[list[str], str | None, bool]], eol: bytes) -> bytes:
    out = b""
    for lines, name, comment in items:
        if comment:
            out += b": ping" + eol
        if name:
            out += b"event: " + name.encode() + eol
        for line in lines:
            out += b"data: " + line.encode() + eol
        out += eol
    return out


def parse(stream: bytes, cuts: list[int]) -> list[tuple[bytes, str | None]]:
    parser = SseParser()
    got = []
    offset = i = 0
    while offset < len(stream):
        size = cuts[i % len(cuts)]
        got += parser.feed(stream[offset : offset + size])
        offset += size
        i += 1
    tail, _ = parser.finish()
    return [(e.data, e.event) for e in got + tail]


@given(
    events,
    st.sampled_from([b"\n", b"\r", b"\r\n"]),
    st.lists(st.integers(1, 7), min_size=1, max_size=10),
)
def test_chunking_and_line_ends_do_not_matter(items, eol, cuts) -> None:  # type: ignore[no-untyped-def]
    stream = render(items, eol)
    expected = [("\n".join(lines).encode(), name) for lines, name, _ in items]
    assert parse(stream, cuts) == expected
    assert parse(stream, [len(stream) or 1]) == expected


def test_fields_comments_bom_and_unfinished_event() -> None:
    parser = SseParser()
    got = parser.feed(b"\xef\xbb\xbfid: 3\nretry: 100\n:keep\ndata:x\ndata\n\ndata: half")
    assert [(e.data, e.id, e.retry) for e in got] == [(b"x\n", "3", 100)]
    assert parser.comments == 1
    events, leftover = parser.finish()
    assert events == [] and leftover == b"data: half"


def test_a_cr_at_the_end_of_a_chunk_ends_its_line_at_once() -> None:
    # An event whose blank line is a CR that ends the chunk is the server's last
    # word for now: it must be recorded now, not when (if ever) more bytes come.
    parser = SseParser()
    assert [e.data for e in parser.feed(b"data: a\r\r")] == [b"a"]
    assert [e.data for e in parser.feed(b"\ndata: b\r")] == []  # the LF of a CRLF: no line
    assert [e.data for e in parser.feed(b"\n\r\n")] == [b"b"]
    assert parser.finish() == ([], b"")


def test_a_big_event_in_small_chunks_is_read_once() -> None:
    # 8 MiB in 2 KiB chunks: a parser that re-scanned or re-copied what it holds
    # at each chunk would go through 16 GB here (minutes); this one reads each
    # byte once, and holds the line's pieces and then the value, not more.
    import tracemalloc

    size, piece = 8 << 20, 2048
    stream = b"event: message\ndata: " + b"y" * size + b"\n\n"
    parser = SseParser()
    got = []
    tracemalloc.start()
    try:
        for at in range(0, len(stream), piece):
            got += parser.feed(stream[at : at + piece])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert [(len(e.data), e.event) for e in got] == [(size, "message")]
    assert got[0].data == b"y" * size
    assert peak < 2.2 * size


def _events(
    parser: SseParser, pieces: list[bytes]
) -> list[tuple[bytes, str | None, str | None, int | None]]:
    got = []
    for piece in pieces:
        got += parser.feed(piece)
    tail, leftover = parser.finish()
    return [(e.data, e.event, e.id, e.retry) for e in got + tail] + [(leftover, None, None, None)]


def _byte_by_byte(stream: bytes) -> list[tuple[bytes, str | None, str | None, int | None]]:
    # One byte at a time no chunk holds a blank line whole: every line goes
    # through the line-by-line parser, the reference for the fast path.
    return _events(SseParser(), [stream[i : i + 1] for i in range(len(stream))])


UNUSUAL = [
    # BOM, comments, retry, id, multi-line data, a field without a colon
    b"\xef\xbb\xbf: hello\nretry: 250\nid: 7\nevent: message\ndata: a\ndata:b\ndata\n\n"
    b"data: {}\n\n: ping\n\nid\ndata: c\n\n\n\ndata: half",
    # CRLF, then CR-only line ends, then LF again, in one stream
    b"event: message\r\ndata: x\r\n\r\ndata: y\r\rdata: z\r\n\r\ndata: w\n\ndata: v\r\n\n",
    # the usual stream, LF and CRLF
    b'event: message\ndata: {"id":1}\n\nevent: message\ndata: {"id":2}\n\n',
    b'event: message\r\ndata: {"id":1}\r\n\r\nevent: message\r\ndata: {"id":2}\r\n\r\n',
    # a blank line that is a CRLF's second half at a chunk boundary, events whose
    # name is cut, a data line with a lone CR in the middle
    b"data: a\r\n\r\nevent: mes\rdata: b\r\n\ndata: c\n\r\n\n",
]


@pytest.mark.parametrize("stream", UNUSUAL)
def test_a_stream_cut_at_every_byte_gives_the_same_events(stream: bytes) -> None:
    expected = _byte_by_byte(stream)
    assert _events(SseParser(), [stream]) == expected
    for cut in range(1, len(stream)):
        assert _events(SseParser(), [stream[:cut], stream[cut:]]) == expected, cut


@given(
    st.lists(
        st.sampled_from(
            [b"data: a", b"data:b", b"data", b"event: e", b"id: 1", b"retry: 5", b": c", b""]
        ),
        max_size=12,
    ),
    st.lists(st.sampled_from([b"\n", b"\r", b"\r\n"]), min_size=1, max_size=12),
    st.lists(st.integers(1, 40), min_size=1, max_size=6),
)
def test_any_mix_of_lines_and_line_ends_parses_as_line_by_line(lines, eols, cuts) -> None:  # type: ignore[no-untyped-def]
    stream = b"".join(line + eols[i % len(eols)] for i, line in enumerate(lines))
    pieces = []
    at = i = 0
    while at < len(stream):
        pieces.append(stream[at : at + cuts[i % len(cuts)]])
        at += cuts[i % len(cuts)]
        i += 1
    assert _events(SseParser(), pieces) == _byte_by_byte(stream)
