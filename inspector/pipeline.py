"""Where a proxy's records go: the capture file, without ever stopping the traffic.

A proxy hands each batch of records to :meth:`Recorder.emit`; the writer
numbers them and appends them to the capture. Analysis does not happen here:
the live-checks worker reads the capture (the capture file is the bus). If
recording fails (a full disk, a bug), ``on_error`` hears of it and the relay
goes on: forward first, observe second.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from mcpeek.inspector.capture.writer import CaptureWriter
from mcpeek.inspector.records import SeqRecord


class Recorder:
    def __init__(
        self, writer: CaptureWriter, on_error: Callable[[BaseException], None] | None = None
    ) -> None:
        self.writer = writer
        self.on_error = on_error
        self.recorded = 0  # records written so far (what the live checks have to catch up on)

    def emit(self, records: Sequence[SeqRecord]) -> None:
        try:
            self.writer.write_many(records)
            self.recorded += len(records)
        except Exception as exc:  # recording must never break the relay
            if self.on_error is not None:
                self.on_error(exc)
