"""Where the writer's bytes go: a file, written inline or by a background thread.

Disk writes can take milliseconds per MiB; done inline they would stall the
relay that produced the records. ``os.write`` releases the GIL, so a thread
that owns the writes lets the relay keep forwarding while the disk catches
up. The queue is bounded (``max_pending`` bytes): past it, :meth:`submit`
waits, so a slow disk slows the recording rather than growing memory.
"""

from __future__ import annotations

import os
import threading
from collections import deque


class FileSink:
    def __init__(self, fd: int, *, threaded: bool = False, max_pending: int = 16 << 20) -> None:
        self._fd = fd
        self._max_pending = max_pending
        self._queue: deque[bytes | bytearray] = deque()
        self._pending = 0
        self._cond = threading.Condition()
        self._closing = False
        self.error: OSError | None = None
        self._thread: threading.Thread | None = None
        if threaded:
            self._thread = threading.Thread(target=self._run, name="mcpeek-capture", daemon=True)
            self._thread.start()

    def submit(self, data: bytes | bytearray) -> None:
        """Queue ``data`` (whole lines) for the file; raises a previous write error."""
        if self.error is not None:
            raise self.error
        if self._thread is None:
            self._write(data)
            return
        with self._cond:
            while self._pending >= self._max_pending and self.error is None:
                self._cond.wait()
            self._queue.append(data)
            self._pending += len(data)
            self._cond.notify_all()

    def close(self) -> None:
        """Write out what is queued, then close the file."""
        if self._thread is not None:
            with self._cond:
                self._closing = True
                self._cond.notify_all()
            self._thread.join()
        os.close(self._fd)

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._queue and not self._closing:
                    self._cond.wait()
                if not self._queue:
                    return
                data = self._queue.popleft()
            try:
                if self.error is None:  # after a failed write, a torn line must stay last
                    self._write(data)
            except OSError as exc:
                self.error = exc
            with self._cond:
                self._pending -= len(data)
                self._cond.notify_all()

    def _write(self, data: bytes | bytearray) -> None:
        written = 0
        with memoryview(data) as view:
            while written < len(view):
                written += os.write(self._fd, view[written:])
