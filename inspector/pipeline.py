"""Where a proxy's records go: the capture file, without ever stopping the traffic.

A proxy hands each batch of records to :meth:`Recorder.emit`; the writer
numbers them and appends them to the capture. Analysis does not happen here:
the live-checks worker reads the capture (the capture file is the bus). If
recording fails (a full disk, a bug), ``on_error`` hears of it and the relay
goes on: forward first, observe second.

In an event loop, the batches emitted in one turn of the loop are written
together at its end, in the order they came: one system call (and one
encoding) for all the records of the exchanges served in that turn, where
each batch cost one of its own. Once :data:`WRITTEN_AT` records wait, they are
written at once: a stdio relay flooded with small messages emits thousands a
turn, and held to the turn's end they raised its peak memory from 48 to 62 MB.
A record's time is taken when it is emitted.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

from mcpeek.inspector.capture.writer import CaptureWriter
from mcpeek.inspector.records import SeqRecord, clock

#: Records waiting for the end of the turn that are written at once.
WRITTEN_AT = 256


class Recorder:
    def __init__(
        self, writer: CaptureWriter, on_error: Callable[[BaseException], None] | None = None
    ) -> None:
        self.writer = writer
        self.on_error = on_error
        self.recorded = 0  # records written so far (what the live checks have to catch up on)
        self._pending: list[SeqRecord] = []  # emitted in this turn of the loop, not written yet

    def emit(self, records: Sequence[SeqRecord]) -> None:
        if not records:
            return
        pending = self._pending
        if not pending:
            if len(records) >= WRITTEN_AT:
                self._write(records)
                return
            try:
                asyncio.get_running_loop().call_soon(self.flush)
            except RuntimeError:  # no loop running: written at once
                self._write(records)
                return
        now = 0.0
        for record in records:
            if not record.t:
                now = now or clock()
                record.t = now
        pending.extend(records)
        if len(pending) >= WRITTEN_AT:
            self.flush()  # (the turn's end then finds nothing to write)

    def flush(self) -> None:
        """Write what was emitted and not written yet (the end of a loop's turn, or
        of the traffic: called again, it writes nothing)."""
        records, self._pending = self._pending, []
        if records:
            self._write(records)

    def _write(self, records: Sequence[SeqRecord]) -> None:
        try:
            self.writer.write_many(records)
            self.recorded += len(records)
        except Exception as exc:  # recording must never break the relay
            if self.on_error is not None:
                self.on_error(exc)
