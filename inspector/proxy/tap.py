"""Turn a relay's byte chunks into capture records, after they were forwarded.

The stdio transport frames messages by ``\\n``. A :class:`LineSplitter` per
direction cuts the chunks the relay forwarded into lines with no length
limit (a 100 MB line is collected piece by piece, never re-scanned), and the
:class:`StdioTap` emits one ``msg`` record per line of stdin/stdout and one
``stderr`` record per line of the server's stderr. A last line cut short by
EOF is emitted with ``partial`` set, so the wire can be rebuilt exactly.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from mcpeek.inspector.records import Direction, Event, Msg, SeqRecord, Stderr, clock, text_fields

Emit = Callable[[Sequence[SeqRecord]], None]


class LineSplitter:
    """Collects chunks and hands back complete lines, without their ``\\n``."""

    __slots__ = ("_pieces",)

    def __init__(self) -> None:
        self._pieces: list[bytes] = []

    def feed(self, chunk: bytes) -> list[bytes]:
        if b"\n" not in chunk:
            if chunk:
                self._pieces.append(chunk)
            return []
        lines = chunk.split(b"\n")
        rest = lines.pop()
        if self._pieces:
            self._pieces.append(lines[0])
            lines[0] = b"".join(self._pieces)
            self._pieces.clear()
        if rest:
            self._pieces.append(rest)
        return lines

    @property
    def pending(self) -> int:
        return sum(len(p) for p in self._pieces)

    def finish(self) -> bytes | None:
        """The unterminated tail at EOF, if any."""
        if not self._pieces:
            return None
        tail = b"".join(self._pieces)
        self._pieces.clear()
        return tail


class StdioTap:
    """Records what a stdio relay forwarded, through ``emit`` (a batch per chunk).

    All the lines completed by one chunk share one timestamp: they arrived
    together, and one clock read per chunk keeps the relay's hot path short.
    """

    def __init__(self, emit: Emit) -> None:
        self._emit = emit
        self._splitters: dict[str, LineSplitter] = {
            "c2s": LineSplitter(),
            "s2c": LineSplitter(),
            "stderr": LineSplitter(),
        }
        self.message_count = 0

    def data(self, direction: Direction, chunk: bytes) -> None:
        lines = self._splitters[direction].feed(chunk)
        if not lines:
            return
        t = clock()
        self.message_count += len(lines)
        records = [_msg(direction, line, t, partial=False) for line in lines]
        del lines  # a 16 MB line's bytes go before it is redacted and encoded
        self._emit(records)

    def stderr(self, chunk: bytes) -> None:
        lines = self._splitters["stderr"].feed(chunk)
        if lines:
            t = clock()
            self._emit([Stderr(t=t, raw=raw, raw_b64=b64) for raw, b64 in map(text_fields, lines)])

    def eof(self, stream: str) -> None:
        """Flush the unterminated last line of ``c2s``, ``s2c`` or ``stderr``."""
        tail = self._splitters[stream].finish()
        if tail is None:
            return
        t = clock()
        if stream == "stderr":
            raw, raw_b64 = text_fields(tail)
            self._emit([Stderr(t=t, raw=raw, raw_b64=raw_b64, partial=True)])
        else:
            self.message_count += 1
            self._emit([_msg(stream, tail, t, partial=True)])  # type: ignore[arg-type]

    def line(
        self,
        direction: Direction,
        line: bytes,
        *,
        before: Sequence[SeqRecord] = (),
        made: str | None = None,
        partial: bool = False,
    ) -> None:
        """One line the acting relay delivered, after ``before`` (what it did)."""
        record = _msg(direction, line, clock(), partial=partial)
        record.made = made
        self.message_count += 1
        self._emit([*before, record])

    def records(self, records: Sequence[SeqRecord]) -> None:
        self._emit(records)

    def event(self, name: str, **fields: object) -> None:
        self._emit([Event(event=name, **fields)])  # type: ignore[arg-type]


def _msg(direction: Direction, line: bytes, t: float, *, partial: bool) -> Msg:
    try:
        return Msg(t=t, dir=direction, ch="stdio", raw=line.decode("utf-8"), partial=partial)
    except UnicodeDecodeError:
        raw, raw_b64 = text_fields(line)
        return Msg(t=t, dir=direction, ch="stdio", raw=raw, raw_b64=raw_b64, partial=partial)
