"""The record fan-out every front end composes: capture file first, then observers.

A proxy hands each batch of records to :meth:`Recorder.emit`; the writer
numbers them and appends them to the capture, then each observer sees each
record in turn. An observer that raises is reported
through ``on_error`` and the others still run: observation never stops the
record stream.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from inspector.capture.writer import CaptureWriter
from inspector.records import SeqRecord

Observer = Callable[[SeqRecord], None]


class Recorder:
    def __init__(
        self,
        writer: CaptureWriter | None,
        observers: Sequence[Observer] = (),
        on_error: Callable[[BaseException], None] | None = None,
    ) -> None:
        self.writer = writer
        self.observers = list(observers)
        self.on_error = on_error

    def emit(self, records: Sequence[SeqRecord]) -> None:
        if self.writer is not None:
            self.writer.write_many(records)
        for observer in self.observers:
            for record in records:
                try:
                    observer(record)
                except Exception as exc:
                    if self.on_error is not None:
                        self.on_error(exc)
