"""The record of a mock session: numbered records for ``-w`` and the live checks.

The mock's front ends describe what crossed their wire with the same
records a proxy writes (``msg`` in both directions, ``http`` exchanges,
``event``), so a mock session's capture reads like any other, and the same
Analyzer and rules check the client under test. :class:`Tape` numbers and
stamps each record, appends it to a :class:`CaptureWriter` when one is
given, and feeds an Analyzer with the listeners given (the CLI passes the
rule engine: the core never imports ``rules``). :meth:`Tape.direction` says
which side sent a numbered record, so a violation can be told to be the
client's.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from mcpeek.inspector.analysis import AnalysisListener, Analyzer
from mcpeek.inspector.analysis.guarded import GuardedAnalyzer
from mcpeek.inspector.capture.writer import CaptureWriter
from mcpeek.inspector.records import Direction, Event, Header, Http, Msg, SeqRecord, text_fields


class Tape:
    def __init__(
        self,
        *,
        transport: str = "stdio",
        writer: CaptureWriter | None = None,
        listeners: Sequence[AnalysisListener] = (),
    ) -> None:
        self.transport = transport
        self.writer = writer
        # The client's checks: a bug in them is told once and never stops the mock.
        self._checks = GuardedAnalyzer(Analyzer(listeners), "the checks") if listeners else None
        if self._checks is not None:
            self._checks.analyzer.feed(Header(transport=transport, target="mcpeek serve"))
        self._seq = 0
        self._directions: dict[int, str] = {}
        self.closed = False

    def msg(self, direction: Direction, data: bytes, ch: str = "stdio") -> None:
        raw, raw_b64 = text_fields(data)
        self._add(Msg(dir=direction, ch=ch, raw=raw, raw_b64=raw_b64), direction)

    def http(self, x: str, phase: str, **fields: Any) -> None:
        direction = "c2s" if phase == "request" else "s2c"
        self._add(Http(x=x, phase=phase, **fields), direction)  # type: ignore[arg-type]

    def event(self, name: str, **fields: Any) -> None:
        self._add(Event(event=name, **fields), None)

    def _add(self, record: SeqRecord, direction: str | None) -> None:
        if self.closed:
            return
        record.t = round(time.time(), 6)
        if self.writer is not None:
            self.writer.write(record)  # numbers it
            self._seq = record.seq
        else:
            self._seq += 1
            record.seq = self._seq
        if direction is not None:
            self._directions[record.seq] = direction
        if self._checks is not None:
            self._checks.feed(record)

    def direction(self, seq: int) -> str | None:
        """``c2s`` or ``s2c`` for a message or HTTP record this tape numbered."""
        return self._directions.get(seq)

    def close(self) -> None:
        """The session ended: the analysis ends its open flows, the capture closes."""
        if self.closed:
            return
        if self._checks is not None:
            self._checks.analyzer.finish()
        self.closed = True
        if self.writer is not None:
            self.writer.close()
