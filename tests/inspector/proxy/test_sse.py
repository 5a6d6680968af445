"""The SSE parser: any chunking and any line ends give the same events."""

from __future__ import annotations

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
