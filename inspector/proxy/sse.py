"""An incremental Server-Sent Events parser (sans-IO), for recording relayed streams.

The HTTP relay forwards SSE bytes untouched as they arrive; this parser
reads a copy, chunk by chunk, and returns the complete events. It follows
the WHATWG event-stream rules: lines end in CRLF, LF or CR (a CR at the end
of a chunk ends its line at once; an LF that starts the next chunk is then
its CRLF's second half); ``data:`` lines join with ``\\n``; a line
starting with ``:`` is a comment (keep-alive); an empty line dispatches the
event; a leading UTF-8 BOM is dropped.
"""

from __future__ import annotations

import msgspec

_BOM = b"\xef\xbb\xbf"


class SseEvent(msgspec.Struct, gc=False):
    data: bytes
    event: str | None = None
    id: str | None = None
    retry: int | None = None


class SseParser:
    """Each byte is looked at once, at C speed (``bytes.find``): a 16 MB event
    that arrives in 64 KiB chunks is collected piece by piece and joined once,
    never re-scanned or re-copied per chunk."""

    def __init__(self) -> None:
        self._pieces: list[bytes] = []  # the line in progress
        self._head = b""  # the first bytes, until they are known not to be a BOM
        self._started = False
        self._after_cr = False  # the last chunk ended in CR: an LF now ends no line
        self._data: list[bytes] = []
        self._event: str | None = None
        self._id: str | None = None
        self._retry: int | None = None
        self.comments = 0

    def feed(self, chunk: bytes) -> list[SseEvent]:
        if not self._started:
            chunk = self._head + chunk
            if len(chunk) < len(_BOM) and _BOM.startswith(chunk):
                self._head = chunk
                return []
            self._started = True
            self._head = b""
            if chunk.startswith(_BOM):
                chunk = chunk[len(_BOM) :]
        events: list[SseEvent] = []
        start = 0  # where the current line starts in this chunk
        size = len(chunk)
        if self._after_cr and size:
            self._after_cr = False
            if chunk[0] == 0x0A:  # the LF of a CRLF split across chunks
                start = 1
        if not self._pieces:
            start = self._whole_events(chunk, start, events)
        # The next LF and CR, each searched again only once passed: a chunk of
        # many short lines is still scanned once.
        lf = chunk.find(b"\n", start)
        cr = chunk.find(b"\r", start)
        while lf >= 0 or cr >= 0:
            if cr < 0 or 0 <= lf < cr:
                end, after = lf, lf + 1
            elif cr + 1 < size:
                end, after = cr, cr + 2 if chunk[cr + 1] == 0x0A else cr + 1
            else:  # a CR ends the chunk: the line ends here, an LF may follow
                end, after = cr, size
                self._after_cr = True
            if self._pieces:
                self._pieces.append(chunk[start:end])
                self._long_line(events)
            else:
                self._line(chunk[start:end], events)
            start = after
            if 0 <= lf < start:
                lf = chunk.find(b"\n", start)
            if 0 <= cr < start:
                cr = chunk.find(b"\r", start)
        if start < size:
            self._pieces.append(chunk[start:] if start else chunk)
        return events

    def _whole_events(self, chunk: bytes, start: int, events: list[SseEvent]) -> int:
        """The fast path, for the usual stream: the lines of ``chunk`` from ``start``
        up to its last blank line, when they all end alike in LF or in CRLF, split
        at once (``bytes.split``) instead of found one by one. Returns where the
        line-by-line parser goes on (``start`` when the path does not apply: a
        blank line missing, or CR line ends mixed in)."""
        last = chunk.rfind(b"\n\n", start)
        if last >= 0:
            region = chunk[start:last]
            if b"\r" in region:
                return start  # a CR ends some line here: line by line
            after = last + 2
            lines = region.split(b"\n")
        else:
            last = chunk.rfind(b"\r\n\r\n", start)
            if last < 0:
                return start
            region = chunk[start:last]
            ends = region.count(b"\r\n")
            if region.count(b"\r") != ends or region.count(b"\n") != ends:
                return start
            after = last + 4
            lines = region.split(b"\r\n")
        del region
        lines.append(b"")  # the blank line at ``last``
        # The usual lines are read here, without a call each; any other goes to
        # :meth:`_line`, which appends to the same ``self._data``.
        data = self._data
        for line in lines:
            if line.startswith(b"data: "):
                data.append(line[6:])
            elif not line:
                if data:
                    events.append(SseEvent(b"\n".join(data), self._event, self._id, self._retry))
                    data = self._data = []
                self._event = None
            elif line.startswith(b"event: "):
                self._event = line[7:].decode("utf-8", "replace")
            else:
                self._line(line, events)
        return after

    def finish(self) -> tuple[list[SseEvent], bytes]:
        """End of stream: the bytes of an event left unfinished (which SSE clients
        drop); no event (a CR ends a line at once, so none waits for the end)."""
        rest = b"".join(self._pieces) or self._head
        pending = b"\n".join(self._data)
        self._pieces = []
        self._data = []
        return [], rest or pending

    def _long_line(self, events: list[SseEvent]) -> None:
        """A line that came in pieces: its value is joined from them directly,
        so that a 16 MB ``data:`` line is copied once, not joined then sliced."""
        pieces = self._pieces
        self._pieces = []
        first = pieces[0]
        colon = first.find(b":")
        if colon <= 0 or colon + 1 >= len(first):  # a comment, or a name cut short
            self._line(b"".join(pieces), events)
            return
        skip = colon + 2 if first[colon + 1] == 0x20 else colon + 1
        pieces[0] = first[skip:]
        value = b"".join(pieces)
        del pieces[:]
        self._field(first[:colon], value)

    def _line(self, line: bytes, events: list[SseEvent]) -> None:
        if not line:
            if self._data:
                events.append(SseEvent(b"\n".join(self._data), self._event, self._id, self._retry))
            self._data = []
            self._event = None
            return
        if line.startswith(b":"):
            self.comments += 1
            return
        colon = line.find(b":")
        if colon < 0:
            self._field(line, b"")
        else:
            skip = colon + 2 if line[colon + 1 : colon + 2] == b" " else colon + 1
            self._field(line[:colon], line[skip:])

    def _field(self, name: bytes, value: bytes) -> None:
        if name == b"data":
            self._data.append(value)
        elif name == b"event":
            self._event = value.decode("utf-8", "replace")
        elif name == b"id" and b"\x00" not in value:
            self._id = value.decode("utf-8", "replace")
        elif name == b"retry" and value.isdigit():
            self._retry = int(value)


def message_event(data: bytes) -> bytes:
    """An SSE ``message`` event carrying ``data`` (one ``data:`` line per line)."""
    lines = b"".join(b"data: " + line + b"\n" for line in data.split(b"\n"))
    return b"event: message\n" + lines + b"\n"


class SseBlocks:
    """Cuts an SSE stream into whole events, each with its exact bytes and its data
    (for the acting relay, which forwards an event it does not change byte for byte).
    An event ends at a blank line (LF LF or CRLF CRLF)."""

    def __init__(self) -> None:
        self._pending = b""

    def feed(self, chunk: bytes) -> list[tuple[bytes, bytes]]:
        buffer = self._pending + chunk
        out = []
        start = 0
        while True:
            ends = [
                i for i in (buffer.find(b"\n\n", start), buffer.find(b"\r\n\r\n", start)) if i >= 0
            ]
            if not ends:
                break
            end = min(ends)
            end += 2 if buffer[end : end + 2] == b"\n\n" else 4
            block = buffer[start:end]
            parsed = SseParser().feed(block)
            out.append((block, parsed[0].data if parsed else b""))
            start = end
        self._pending = buffer[start:]
        return out
