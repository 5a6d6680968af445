"""A mock's or a replay's session as capture records: for ``-w`` and for the checks.

``serve`` (the mock's front ends) and ``replay`` (its transports) describe
what crossed their wire with the same records a proxy writes (``msg`` in
both directions, ``http`` exchanges, ``stderr``, ``event``), so their
session's capture reads like any other, and the same Analyzer and rules
check it as ``lint`` would check the file. :class:`Tape` numbers and stamps
each record (through the :class:`CaptureWriter` when one is given), and
feeds an Analyzer with the listeners given (the CLI passes the rule engine:
the core never imports ``rules``).

A failed write ends the capture, never the session: the error waits in
:attr:`Tape.error` for the command to report. :meth:`Tape.direction` says
which side sent a numbered record, so that a violation (whose ``msgs`` end
with the offending record) can be told apart: the client's (``serve``,
the pytest plugin) or the server's (``replay``).

With ``-w --force`` onto an old capture, the capture takes its name only once
the session has started (:meth:`CaptureWriter.commit`): at the first record
sent from ``started_by`` (``serve``: the client's first word; None: any
record). A session that fails before that is :meth:`Tape.discard`-ed, and the
old capture stays as it was. A replay's capture (``replace_at_start`` false)
takes its name only when the session closes: a replay stopped before its end
is :meth:`Tape.abandon`-ed, and the old capture stays too.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mcpeek.inspector.analysis import AnalysisListener, Analyzer
from mcpeek.inspector.analysis.guarded import GuardedAnalyzer
from mcpeek.inspector.capture.writer import CaptureWriter, utc_timestamp
from mcpeek.inspector.records import (
    Direction,
    Event,
    Header,
    Http,
    Msg,
    SeqRecord,
    clock,
    text_fields,
)

SENDERS: tuple[Direction | None, ...] = (None, "c2s", "s2c")


class Tape:
    def __init__(
        self,
        transport: str = "stdio",
        target: list[str] | str = "mcpeek serve",
        *,
        writer: CaptureWriter | None = None,
        listeners: Sequence[AnalysisListener] = (),
        started_by: Direction | None = None,
        replace_at_start: bool = True,
    ) -> None:
        self.transport = transport
        self._started_by = started_by
        self._replace_at_start = replace_at_start
        self.started = False  # a record from ``started_by`` was seen
        self.writer = writer
        # The analysis sees the header the capture has, so that the file and the
        # live checks agree.
        self.header = (
            writer.header
            if writer is not None
            else Header(created=utc_timestamp(), transport=transport, target=target)
        )
        # The checks: a bug in them is told once and never stops the session.
        self._checks = (
            GuardedAnalyzer(Analyzer(list(listeners)), "the checks") if listeners else None
        )
        if self._checks is not None:
            self._checks.feed(self.header)
        self.error: str | None = None  # why the capture file could not be written
        self._seq = 0
        # Who sent each record, one byte per seq (an index in SENDERS): a flooding server
        # sends millions of lines, and a dict of them cost ~100 bytes a line.
        self._directions = bytearray()
        self.closed = False

    # -- what crossed the wire ---------------------------------------------------------
    def msg(self, direction: Direction, data: bytes, ch: str = "stdio") -> None:
        raw, raw_b64 = text_fields(data)
        self.emit(Msg(dir=direction, ch=ch, raw=raw, raw_b64=raw_b64))

    def http(self, x: str, phase: str, **fields: Any) -> None:
        self.emit(Http(x=x, phase=phase, **fields))  # type: ignore[arg-type]

    def event(self, name: str, **fields: Any) -> None:
        self.emit(Event(event=name, **fields))

    def emit(self, record: SeqRecord) -> None:
        """Number, stamp, write and check one record (a write error stops the file only)."""
        if self.closed:
            return  # late traffic of a session already ended
        record.t = record.t or clock()
        direction = record_direction(record)
        if not self.started:  # an HTTP exchange's end was sent by nobody
            sent = direction if not isinstance(record, Http) or record.phase != "end" else None
            self.started = self._started_by is None or sent == self._started_by
        if self.writer is not None and self.error is None:
            try:
                self.writer.write(record)  # numbers it
                if self.started and self._replace_at_start:
                    self.writer.commit()  # the session has started (-w --force replaces now)
            except OSError as exc:  # the session goes on; the capture ends here
                self.error = f"cannot write the capture {self.writer.path}: {exc.strerror or exc}"
                record.seq = self._seq + 1  # from here on, the tape numbers
            self._seq = record.seq
        else:
            self._seq += 1
            record.seq = self._seq
        if direction is not None:
            if len(self._directions) <= record.seq:
                self._directions.extend(bytes(record.seq + 1 - len(self._directions)))
            self._directions[record.seq] = SENDERS.index(direction)
        if self._checks is not None:
            self._checks.feed(record)

    def direction(self, seq: int) -> str | None:
        """``c2s`` or ``s2c`` for a message or HTTP record this tape numbered."""
        return SENDERS[self._directions[seq]] if 0 <= seq < len(self._directions) else None

    def discard(self) -> None:
        """The session failed before it started: the checks end, and the capture is
        removed (an old capture that ``--force`` was to replace stays as it was)."""
        if self.writer is not None and not self.started:
            self.writer.discard()
        self.close()

    def abandon(self) -> str:
        """The session was stopped before its end (Ctrl-C): the checks end, and a
        capture that was to replace an old one is removed (the old one stays as it
        was); a new capture keeps what was recorded, if the session had started.
        What became of the capture, in words for the user ("" without one)."""
        writer = self.writer
        if writer is None or self.closed:  # (closed: the session had ended, all written)
            self.close()
            return "" if writer is None else f"the capture {writer.path} holds the whole replay"
        path, replacing = writer.path, writer.replacing
        if not replacing and self.started:
            self.close()
            return f"the capture {path} holds the replay up to the interruption"
        writer.discard()
        self.close()
        if replacing:
            return f"{path} kept as it was (the unfinished replay is not saved)"
        return "no capture written (the server had not answered)"

    def close(self) -> None:
        """The session ended: the analysis ends its open flows, the capture closes."""
        if self.closed:
            return
        self.closed = True
        if self._checks is not None:
            self._checks.finish()
        writer = self.writer
        if writer is None:
            return
        waiting = writer.replacing  # an old capture waits to be replaced
        if waiting and (self.error is not None or not self.started):
            # The capture stopped short (a full disk), or the session never started
            # (stopped before the client's first word): neither takes the old one's place.
            writer.discard()
            if self.error is not None:
                self.error += (
                    f"; {writer.path} kept as it was (this session's capture is not saved)"
                )
            return
        try:
            writer.close()
        except OSError as exc:
            if writer.replacing:  # the rename refused: both files stay, under their names
                self.error = self.error or (
                    f"cannot replace {writer.path}: {exc.strerror or exc}; this session's "
                    f"capture is {writer.writing_path}, {writer.path} kept as it was"
                )
            else:
                self.error = self.error or f"cannot write the capture {writer.path}: {exc}"


def record_direction(record: object) -> Direction | None:
    """Who sent a message or HTTP record (None for the others)."""
    if isinstance(record, Msg):
        return record.dir
    if isinstance(record, Http):
        return "c2s" if record.phase == "request" else "s2c"
    return None
