"""Cutting an SSE stream into whole events for the acting HTTP relay."""

from __future__ import annotations

from mcpeek.inspector.proxy.sse import SseBlocks, SseParser, message_event


def test_events_come_whole_with_their_exact_bytes_across_chunks() -> None:
    stream = (
        b'id: 1\nevent: message\ndata: {"a":1}\n\n'
        b": keep-alive\n\n"
        b'event: message\r\ndata: {"b":2}\r\n\r\n'
    )
    blocks = SseBlocks()
    got = []
    for i in range(0, len(stream), 7):  # chunks that split lines and line ends
        got.extend(blocks.feed(stream[i : i + 7]))
    assert b"".join(block for block, _ in got) == stream  # byte for byte
    assert [data for _, data in got] == [b'{"a":1}', b"", b'{"b":2}']


def test_a_made_event_parses_back_to_its_data() -> None:
    data = b'{"x":"two\nlines"}'
    (event,) = SseParser().feed(message_event(data))
    assert event.data == data and event.event == "message"
