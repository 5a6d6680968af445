"""Records held back behind a big request body, so that recording it never delays the answer.

Recording a request body of 16 MB (joining, decoding, redacting, encoding and
writing it: about 0.15 s of CPU, more on a busy machine) right after its last
byte went upstream put that work between the upstream's answer and the
client: the answer came while the event loop was busy recording, and waited.
The relay therefore holds the records of a body of :data:`HOLD_AT` bytes or
more (:meth:`HeldRecords.hold`) until the response to it has been relayed to
the client (:meth:`HeldRecords.relayed`), or for :data:`HOLD_FOR` seconds,
whichever comes first: an upstream that holds the call still has it in the
capture within that time, for the viewer and ``--slow``.

While a body is held, every record the relay emits, for any exchange, waits
behind it, stamped with the time it was emitted; the held body's records are
stamped with the time its last byte was forwarded. The capture is the one an
immediate recording writes (same records, same order, same times): only the
moment they reach the file is later. Forward first, record after, still.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

from mcpeek.inspector.records import SeqRecord, clock

Emit = Callable[[Sequence[SeqRecord]], None]
#: Builds a held body's records (stamped with the time it ended) when they are written.
Build = Callable[[], Sequence[SeqRecord]]

#: A request body of this many bytes or more is held (below, recording costs < 10 ms).
HOLD_AT = 1 << 20
#: Seconds a held body waits at most for its response to be relayed.
HOLD_FOR = 1.0


class HeldRecords:
    """The relay's ``emit``, which can hold records behind a big request body."""

    def __init__(self, emit: Emit) -> None:
        self._emit = emit
        self._held: list[SeqRecord | Build] = []  # in emit order; a Build per held body
        self._owners: set[str] = set()  # the exchanges whose bodies are held
        self._timer: asyncio.TimerHandle | None = None

    @property
    def holding(self) -> bool:
        return bool(self._owners)

    def emit(self, records: Sequence[SeqRecord]) -> None:
        """Write ``records`` now, or behind what is held."""
        if not self._owners:
            self._emit(records)
            return
        now = clock()
        for record in records:
            if not record.t:  # the time it was emitted, not the time it is written
                record.t = now
        self._held.extend(records)

    def hold(self, x: str, build: Build) -> None:
        """Hold the body of exchange ``x``, whose records ``build`` makes when they
        are to be written (the records emitted meanwhile wait behind them)."""
        self._held.append(build)
        self._owners.add(x)
        if self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(HOLD_FOR, self.release)

    def relayed(self, x: str) -> None:
        """The response of exchange ``x`` reached the client (or ``x`` is over):
        what is held behind its body is written now."""
        if x in self._owners:
            self.release()

    def release(self) -> None:
        """Write everything held, in order, one held body at a time."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        held, self._held = self._held, []
        self._owners.clear()
        batch: list[SeqRecord] = []
        for entry in held:
            if isinstance(entry, SeqRecord):
                batch.append(entry)
            else:
                batch.extend(entry())
                self._emit(batch)  # (a big body's copies go before the next one's are made)
                batch = []
        if batch:
            self._emit(batch)
