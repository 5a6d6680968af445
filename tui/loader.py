"""Reading captures into session models off the UI thread.

:func:`load_into` runs in a thread worker: it reads (and, for a live capture,
follows) one file, feeds the records to the :class:`SessionModel` and calls
``notify`` at most every ``interval`` seconds — the first time after a small
first batch, so the first screen shows while a big file is still loading.
The app turns each call into one :class:`SessionUpdated` message; messages
for the same session replace each other in the queue, so a burst of traffic
costs one redraw. ``notify`` may return a :class:`threading.Event` that the
app sets once the update is on screen: the loader waits for it (briefly), so
a loader thread busy with a million records cannot starve the UI thread of
the GIL and leave the first screen unpainted.

It reads through :func:`~mcpeek.inspector.capture.run.run_capture`, the loop
``lint`` reads with, as :func:`~mcpeek.tui.recheck.recheck` does when it checks a loaded
capture again with every rule.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

from textual.message import Message

from mcpeek.inspector.capture.reader import CaptureError, CaptureReader
from mcpeek.inspector.capture.run import run_capture
from mcpeek.inspector.records import Record
from mcpeek.inspector.views.session import SessionModel

FIRST_BATCH = 2000  # records before the first screen is drawn
BATCH = 256  # records handed to the model at once
INTERVAL = 0.1  # seconds between updates while following a live capture
BULK_INTERVAL = 0.4  # while reading what a file already holds: more time for reading
LIVE_WINDOW = 10.0  # a capture modified this recently may still be growing


UI_WAIT = 0.25  # longest pause of the loader for the UI to show an update


class SessionUpdated(Message):
    """New rows or changes in ``model``; ``done`` when its loader stopped.

    ``shown`` is set by the app once the update has been drawn.
    """

    def __init__(self, model: SessionModel, *, done: bool = False, error: str | None = None):
        super().__init__()
        self.model = model
        self.done = done
        self.error = error
        self.shown = threading.Event()

    def can_replace(self, message: Message) -> bool:
        if (
            isinstance(message, SessionUpdated)
            and message.model is self.model
            and not message.done
            and message.error is None
        ):
            message.shown.set()  # superseded: nobody waits for it any more
            return True
        return False


class Progress:
    """How far a loader got, for the status line."""

    __slots__ = ("bytes_read", "size")

    def __init__(self, size: int) -> None:
        self.size = size
        self.bytes_read = 0

    @property
    def fraction(self) -> float:
        return min(self.bytes_read / self.size, 1.0) if self.size else 1.0


def is_live(path: Path, now: float | None = None) -> bool:
    """A capture some proxy may still be writing: modified recently."""
    try:
        mtime = path.stat().st_mtime
    except OSError:
        return False
    return (now if now is not None else time.time()) - mtime < LIVE_WINDOW


def load_into(
    model: SessionModel,
    progress: Progress,
    notify: Callable[[], threading.Event | None],
    *,
    follow: bool,
    cancelled: Callable[[], bool],
) -> str | None:
    """Read the capture into ``model``; returns a user-facing error or ``None``.

    The one capture loop (:func:`run_capture`) reads; :class:`_Batches` hands
    its records on to the model in batches. Following stops at the proxy's
    ``exit`` event; ``cancelled`` (the viewer quitting) stops it at once.
    """
    reader = CaptureReader(model.path)
    batches = _Batches(model, reader, progress, notify)
    try:
        run_capture(reader, batches, follow=follow, cancelled=cancelled)
    except CaptureError as exc:
        return str(exc)
    except OSError as exc:
        return f"{model.path}: {exc}"
    return None


class _Batches:
    """The model as :func:`run_capture`'s analysis: records are fed to it in batches
    (one lock-free append per record, one model update per batch), and the UI is
    told at most every ``interval`` seconds."""

    def __init__(
        self,
        model: SessionModel,
        reader: CaptureReader,
        progress: Progress,
        notify: Callable[[], threading.Event | None],
    ) -> None:
        self._model = model
        self._reader = reader
        self._progress = progress
        self._notify = notify
        self._batch: list[Record] = []
        self._last = time.monotonic()
        self._shown = False  # the first screen has been drawn
        self._seen = 0  # records at the last update
        self._interval = BULK_INTERVAL

    def feed(self, record: Record) -> None:
        batch = self._batch
        batch.append(record)
        if len(batch) < BATCH:
            return
        self._drain()
        if time.monotonic() - self._last >= self._interval or (
            not self._shown and self._model.records >= FIRST_BATCH
        ):
            self._flush()

    def tick(self, now: float) -> None:
        """At the end of what a followed capture holds, between polls."""
        self._interval = INTERVAL  # caught up: now updates should be prompt
        self._drain()  # first: a request answered in this batch is not overdue
        if not self._model.ended:
            self._model.analyzer.tick(now)
        self._flush()  # (with what the clock ended: requests now unanswered)

    def finish(self) -> None:
        self._drain()
        self._model.finish()
        progress = self._progress
        progress.bytes_read = progress.size = max(self._reader.bytes_read, progress.size)
        self._seen = -1  # the last update always goes out: it says the loading is over
        self._flush()

    def _drain(self) -> None:
        if self._batch:
            self._model.feed(self._batch)
            self._batch = []

    def _flush(self) -> None:
        self._drain()
        model = self._model
        if self._shown and model.records == self._seen and not model.changed_meanwhile:
            return  # nothing new since the last update
        self._seen = model.records
        self._progress.bytes_read = self._reader.bytes_read
        model.problems = self._reader.problems
        shown_event = self._notify()
        if shown_event is not None:
            shown_event.wait(UI_WAIT)
        self._last = time.monotonic()
        self._shown = True
