"""The record fan-out every front end composes: capture file first, then observers.

A proxy (or a reader replaying a file) hands each record to
:meth:`Recorder.emit`; the writer numbers it and appends it to the capture,
then each observer sees it in turn. An observer that raises is reported
through ``on_error`` and the others still run: observation never stops the
record stream.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

from inspector.capture.writer import CaptureWriter
from inspector.jsonrpc import MessageDecoder
from inspector.records import Msg, SeqRecord, wire_bytes

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

    def emit(self, record: SeqRecord) -> None:
        if self.writer is not None:
            self.writer.write(record)
        for observer in self.observers:
            try:
                observer(record)
            except Exception as exc:
                if self.on_error is not None:
                    self.on_error(exc)


class MessageTally:
    """Decodes every ``msg`` record and counts the kinds seen (the exit summary)."""

    def __init__(self) -> None:
        self._decoder = MessageDecoder()
        self.kinds: Counter[str] = Counter()

    def __call__(self, record: SeqRecord) -> None:
        if isinstance(record, Msg):
            self.kinds[self._decoder.decode(wire_bytes(record)).kind] += 1

    def summary(self) -> str:
        total = sum(self.kinds.values())
        text = f"{total} message{'s' if total != 1 else ''}"
        if self.kinds["invalid"]:
            text += f" ({self.kinds['invalid']} not valid JSON-RPC)"
        return text
