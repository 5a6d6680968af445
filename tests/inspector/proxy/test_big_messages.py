"""A big message costs the recording side a bounded number of copies of itself.

The proxies' memory must stay within a few times the largest message (issue
#16: 60 MB + 3x). These tests follow one 8 MiB message from the relayed
chunks to the capture file, redaction on, and bound what Python allocated
on the way (tracemalloc's peak, above the chunks the relay already held).
"""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pytest

from mcpeek.inspector.capture import CaptureWriter, read_records
from mcpeek.inspector.pipeline import Recorder
from mcpeek.inspector.proxy.http_record import RequestRecorder, ResponseRecorder
from mcpeek.inspector.proxy.tap import StdioTap
from mcpeek.inspector.records import Http, Msg

SIZE = 8 << 20
CHUNK = 1 << 16
# Each step holds at most two copies at once (the pieces and the joined message,
# the bytes and their text, the text and its map, the text and its JSON line,
# which msgspec grows by half again): 2.5, and 3 was the target's bound.
BOUND = 2.75


def message(prefix: bytes = b"", suffix: bytes = b"") -> bytes:
    head = b'{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"'
    return prefix + head + b"y" * SIZE + b'"}]}}' + suffix


def chunks_of(data: bytes) -> list[bytes]:
    return [data[i : i + CHUNK] for i in range(0, len(data), CHUNK)]


def peak_while(feed: Callable[[], None]) -> int:
    tracemalloc.start()
    try:
        feed()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.fixture
def recorder(tmp_path: Path) -> Recorder:
    writer = CaptureWriter(tmp_path / "cap.jsonl", transport="http", target="http://u/mcp")
    assert writer._redactor is not None
    assert writer._redactor.detector is not None  # built: its imports are not the message's cost
    return Recorder(writer, on_error=lambda exc: pytest.fail(repr(exc)))


def recorded_sizes(recorder: Recorder) -> list[int]:
    recorder.writer.close()
    _, records, problems = read_records(recorder.writer.path)
    assert problems == []
    return [len(r.raw or "") for r in records if isinstance(r, Msg)]


def test_an_sse_event(recorder: Recorder) -> None:
    chunks = chunks_of(message(b"event: message\ndata: ", b"\n\n"))

    def feed() -> None:
        body = ResponseRecorder(recorder.emit, "x1", True, False, None)
        for chunk in chunks:
            body.feed(chunk)
        body.finish("complete")

    assert peak_while(feed) < BOUND * SIZE
    assert recorded_sizes(recorder) == [len(message())]


def test_a_json_response(recorder: Recorder) -> None:
    chunks = chunks_of(message())

    def feed() -> None:
        body = ResponseRecorder(recorder.emit, "x1", False, True, None)
        for chunk in chunks:
            body.feed(chunk)
        body.finish("complete")

    assert peak_while(feed) < BOUND * SIZE
    assert recorded_sizes(recorder) == [len(message())]


def test_a_json_request(recorder: Recorder) -> None:
    chunks = chunks_of(message())

    def feed() -> None:
        head = Http(x="x1", phase="request", method="POST", path="/mcp", headers=[])
        body = RequestRecorder(recorder.emit, head, "application/json", None)
        for chunk in chunks:
            body.feed(chunk)
        body.finish()

    assert peak_while(feed) < BOUND * SIZE
    assert recorded_sizes(recorder) == [len(message())]


def test_a_stdio_line(recorder: Recorder) -> None:
    chunks = chunks_of(message(suffix=b"\n"))

    def feed() -> None:
        tap = StdioTap(recorder.emit)
        for chunk in chunks:
            tap.data("s2c", chunk)

    assert peak_while(feed) < BOUND * SIZE
    assert recorded_sizes(recorder) == [len(message())]
