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

:func:`recheck` runs ``mcpeek lint`` on a complete capture in a separate
process (a second core, and exactly the findings lint would print) and
returns its violations.
"""

from __future__ import annotations

import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

import msgspec
from textual.message import Message

from mcpeek.inspector.capture.reader import CaptureError, CaptureReader
from mcpeek.inspector.children import mcpeek_argv
from mcpeek.inspector.records import AnyRecord, Violation
from mcpeek.inspector.views.session import SessionModel

FIRST_BATCH = 2000  # records before the first screen is drawn
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
    """Read the capture into ``model``; returns a user-facing error or ``None``."""
    reader = CaptureReader(model.path)
    batch: list[AnyRecord] = []
    last = time.monotonic()
    shown = False  # the first screen has been drawn
    seen = [0]  # records at the last update
    interval = BULK_INTERVAL

    def drain() -> None:
        if model.header is None and reader.header is not None:
            model.feed([reader.header])
        if batch:
            model.feed(batch)
            batch.clear()

    def flush() -> None:
        nonlocal last, shown
        drain()
        if shown and model.records == seen[0]:
            return  # nothing new since the last update
        seen[0] = model.records
        progress.bytes_read = reader.bytes_read
        model.problems = reader.problems
        shown_event = notify()
        if shown_event is not None:
            shown_event.wait(UI_WAIT)
        last = time.monotonic()
        shown = True

    def stop() -> bool:  # at the end of the file, in follow mode, between polls
        nonlocal interval
        interval = INTERVAL  # caught up: now updates should be prompt
        flush()
        if not model.ended:
            model.analyzer.tick(time.time())
        return cancelled() or model.ended

    try:
        for record in reader.records(follow=follow, stop=stop):
            batch.append(record)
            if len(batch) < 256:
                continue
            drain()
            if cancelled():
                return None
            if time.monotonic() - last >= interval or (not shown and model.records >= FIRST_BATCH):
                flush()
        drain()
    except CaptureError as exc:
        return str(exc)
    except OSError as exc:
        return f"{model.path}: {exc}"
    model.finish()
    progress.bytes_read = progress.size = max(reader.bytes_read, progress.size)
    seen[0] = -1  # the last update always goes out: it says the loading is over
    flush()
    return None


def recheck(
    path: Path, cancelled: Callable[[], bool] = lambda: False, timeout: float = 3600.0
) -> list[Violation] | None:
    """Every violation ``mcpeek lint`` finds in the capture (``None`` if it failed or
    was cancelled: quitting the viewer must not wait for a long lint)."""
    try:
        proc = subprocess.Popen(
            mcpeek_argv("lint", "--format", "json", str(path)),
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
    except OSError:
        return None
    deadline = time.monotonic() + timeout
    out = b""
    while True:
        try:
            out, _ = proc.communicate(timeout=0.25)  # keeps reading: the pipe never fills
            break
        except subprocess.TimeoutExpired:
            if cancelled() or time.monotonic() > deadline:
                proc.kill()
                proc.communicate()
                return None
    if proc.returncode not in (0, 1):
        return None
    found: list[Violation] = []
    for line in out.splitlines():
        try:
            found.append(msgspec.json.decode(line, type=_LintLine).violation())
        except msgspec.MsgspecError:
            continue
    return found


class _LintLine(msgspec.Struct):
    rule: str
    severity: str
    message: str
    msgs: list[int]
    spec: str = ""

    def violation(self) -> Violation:
        return Violation(
            rule=self.rule,
            severity=self.severity,
            msgs=self.msgs,
            message=self.message,
            spec=self.spec,
        )
