"""mcpeek's own voice on stderr, kept out of the server's lines.

In stdio mode stdout is the protocol pipe, so mcpeek speaks only on stderr,
which it shares with the wrapped server. The server's stderr bytes pass
through unchanged and at once; mcpeek's own lines (``mcpeek: …``) wait until
the server has finished its current line, so the two never interleave within
a line.
"""

from __future__ import annotations

import os
import select


class Console:
    def __init__(self, fd: int = 2, *, quiet: bool = False) -> None:
        self._fd = fd
        self.quiet = quiet
        self._mid_line = False
        self._held: list[bytes] = []

    def passthrough(self, chunk: bytes) -> None:
        """Relay a chunk of the server's stderr, then any of our lines it held up."""
        if not chunk:
            return
        self._write(chunk)
        self._mid_line = not chunk.endswith(b"\n")
        if not self._mid_line and self._held:
            self._write(b"".join(self._held))
            self._held.clear()

    def say(self, text: str, *, force: bool = False) -> None:
        """Print ``mcpeek: text``; ``force`` prints even when quiet (errors)."""
        if self.quiet and not force:
            return
        line = f"mcpeek: {text}\n".encode("utf-8", "replace")
        if self._mid_line:
            self._held.append(line)
        else:
            self._write(line)

    def close(self) -> None:
        """At exit: end the server's unterminated line, then print what was held."""
        if self._held:
            self._write(b"\n" + b"".join(self._held))
            self._held.clear()
        self._mid_line = False

    def _write(self, data: bytes) -> None:
        view = memoryview(data)
        try:
            while view:
                try:
                    view = view[os.write(self._fd, view) :]
                except BlockingIOError:
                    # An inherited non-blocking stderr: wait until it drains.
                    select.select([], [self._fd], [], 1.0)
        except OSError:
            pass  # stderr gone (closed pipe): nothing better to do than go on
        finally:
            view.release()
