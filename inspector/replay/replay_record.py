"""The replay session as capture records: for ``-w`` and for the rules.

A transport describes what it sends and receives as ordinary capture records
(``msg``, ``http``, ``stderr``, ``event``), exactly as a proxy would have
recorded the same session. :class:`SessionTape` numbers and stamps them
(through the :class:`~mcpeek.inspector.capture.writer.CaptureWriter` when ``-w``
asks for a file), and feeds them to an
:class:`~mcpeek.inspector.analysis.Analyzer`, whose listeners (the rule engine,
wired by the CLI) check the live traffic as ``lint`` would check the file.

It also remembers which side each record came from, so that a violation
(whose ``msgs`` end with the offending record) can be told apart: the
server's, which fails the replay, or the replayed client's own.
"""

from __future__ import annotations

import time
from collections.abc import Iterable

from mcpeek.inspector.analysis import AnalysisListener, Analyzer
from mcpeek.inspector.capture.writer import CaptureWriter, utc_timestamp
from mcpeek.inspector.records import Header, Http, Msg, SeqRecord


class SessionTape:
    def __init__(
        self,
        transport: str,
        target: list[str] | str,
        *,
        writer: CaptureWriter | None = None,
        listeners: Iterable[AnalysisListener] = (),
    ) -> None:
        self.writer = writer
        self.header = (
            writer.header
            if writer is not None
            else Header(created=utc_timestamp(), transport=transport, target=target)
        )
        self.analyzer = Analyzer(list(listeners))
        self.analyzer.feed(self.header)
        self.error: str | None = None  # why the capture file could not be written
        self.sides: dict[int, str] = {}
        self.messages = 0
        self._seq = 0
        self._finished = False

    def emit(self, record: SeqRecord) -> None:
        """Number, stamp, write and analyse one record (a write error stops the file only)."""
        if self.writer is not None and self.error is None:
            try:
                self.writer.write(record)
            except OSError as exc:  # the replay goes on; the capture ends here
                self.error = f"cannot write the capture {self.writer.path}: {exc}"
            self._seq = record.seq
        else:
            self._seq += 1
            record.seq = self._seq
            record.t = record.t or round(time.time(), 6)
        if isinstance(record, Msg):
            self.sides[record.seq] = record.dir
            self.messages += 1
        elif isinstance(record, Http):
            self.sides[record.seq] = "c2s" if record.phase == "request" else "s2c"
        self.analyzer.feed(record)

    def side(self, msgs: list[int]) -> str | None:
        """The side of the offending (last) record of a violation."""
        return self.sides.get(msgs[-1]) if msgs else None

    def finish(self) -> None:
        if self._finished:
            return
        self._finished = True
        self.analyzer.finish()
        if self.writer is not None:
            try:
                self.writer.close()
            except OSError as exc:
                self.error = self.error or f"cannot write the capture {self.writer.path}: {exc}"
