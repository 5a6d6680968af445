"""An incremental Server-Sent Events parser (sans-IO), for recording relayed streams.

The HTTP relay forwards SSE bytes untouched as they arrive; this parser
reads a copy, chunk by chunk, and returns the complete events. It follows
the WHATWG event-stream rules: lines end in CRLF, LF or CR (a CR at the end
of a chunk waits for the next chunk, in case an LF follows); ``data:``
lines join with ``\\n``; a line starting with ``:`` is a comment (keep-alive);
an empty line dispatches the event; a leading UTF-8 BOM is dropped.
"""

from __future__ import annotations

import re

import msgspec

_LINE_END = re.compile(rb"\r\n|\r|\n")
_BOM = b"\xef\xbb\xbf"


class SseEvent(msgspec.Struct, gc=False):
    data: bytes
    event: str | None = None
    id: str | None = None
    retry: int | None = None


class SseParser:
    def __init__(self) -> None:
        self._buffer = b""
        self._started = False
        self._data: list[bytes] = []
        self._event: str | None = None
        self._id: str | None = None
        self._retry: int | None = None
        self._fields = False  # any field seen since the last dispatch
        self.comments = 0

    def feed(self, chunk: bytes) -> list[SseEvent]:
        buffer = self._buffer + chunk
        if not self._started and buffer:
            if len(buffer) < len(_BOM) and _BOM.startswith(buffer):
                self._buffer = buffer
                return []
            self._started = True
            if buffer.startswith(_BOM):
                buffer = buffer[len(_BOM) :]
        events: list[SseEvent] = []
        position = 0
        while True:
            match = _LINE_END.search(buffer, position)
            if match is None:
                break
            if match.group() == b"\r" and match.end() == len(buffer):
                break  # maybe the first half of a CRLF split across chunks
            self._line(buffer[position : match.start()], events)
            position = match.end()
        self._buffer = buffer[position:]
        return events

    def finish(self) -> tuple[list[SseEvent], bytes]:
        """End of stream: the events a final CR completes, and the bytes of an event
        left unfinished (which SSE clients drop)."""
        rest = self._buffer
        events: list[SseEvent] = []
        if rest.endswith(b"\r"):
            self._line(rest[:-1], events)
            rest = b""
        pending = b"\n".join(self._data)
        self._buffer = b""
        self._data = []
        return events, rest or pending

    def _line(self, line: bytes, events: list[SseEvent]) -> None:
        if not line:
            if self._data:
                events.append(SseEvent(b"\n".join(self._data), self._event, self._id, self._retry))
            self._data = []
            self._event = None
            self._fields = False
            return
        if line.startswith(b":"):
            self.comments += 1
            return
        name, sep, value = line.partition(b":")
        if sep and value.startswith(b" "):
            value = value[1:]
        self._fields = True
        if name == b"data":
            self._data.append(value)
        elif name == b"event":
            self._event = value.decode("utf-8", "replace")
        elif name == b"id" and b"\x00" not in value:
            self._id = value.decode("utf-8", "replace")
        elif name == b"retry" and value.isdigit():
            self._retry = int(value)
