"""mcpeek's own voice on stderr, kept out of the server's lines, and never a reason to stall.

In stdio mode stdout is the protocol pipe, so mcpeek speaks only on stderr,
which it shares with the wrapped server. The server's stderr bytes pass
through unchanged and at once; mcpeek's own lines (``mcpeek: …``) wait until
the server has finished its current line, so the two never interleave within
a line.

Some clients never read a server's stderr. Blocking on it would stall the
whole relay, so while the event loop runs, stderr is an asyncio write
transport: when it fills up, reading the server's stderr pauses (the server
then blocks on its own stderr writes, exactly as it would without mcpeek),
and mcpeek's own lines beyond a bounded backlog are dropped and counted
rather than waited for.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import select
from collections.abc import Callable, Iterator
from typing import Any

OWN_BACKLOG = 256 * 1024  # bytes of our own lines we keep while stderr is full


class _Flow(asyncio.Protocol):
    def __init__(
        self,
        on_pause: Callable[[], None],
        on_resume: Callable[[], None],
        on_lost: Callable[[], None],
    ) -> None:
        self.on_pause = on_pause
        self.on_resume = on_resume
        self.on_lost = on_lost
        self.closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def pause_writing(self) -> None:
        self.on_pause()

    def resume_writing(self) -> None:
        self.on_resume()

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.closed.done():
            self.closed.set_result(None)
        self.on_lost()


class Console:
    def __init__(self, fd: int = 2, *, quiet: bool = False) -> None:
        self._fd = fd
        self.quiet = quiet
        self._mid_line = False
        self._held: list[bytes] = []
        self._transport: Any = None
        self._protocol: _Flow | None = None
        self._blocking: bool | None = None
        self._stalled = False  # a plain write already waited in vain: don't wait again
        self._on_pause: Callable[[], None] = lambda: None
        self._on_resume: Callable[[], None] = lambda: None
        self._on_gone: Callable[[], None] = lambda: None
        self.dropped = 0

    # -- attaching to the event loop ---------------------------------------------
    def follow_backpressure(
        self,
        on_pause: Callable[[], None],
        on_resume: Callable[[], None],
        on_gone: Callable[[], None] = lambda: None,
    ) -> None:
        """Tell ``on_pause``/``on_resume`` when stderr fills up and drains (the stdio
        relay pauses reading the server's stderr meanwhile), and ``on_gone`` when its
        reader goes away (the relay then closes the server's stderr: EPIPE, as without
        mcpeek; a paused stderr would otherwise hold the server forever)."""
        self._on_pause, self._on_resume, self._on_gone = on_pause, on_resume, on_gone

    def _paused(self) -> None:
        self._on_pause()  # looked up at call time: the relay sets its hooks later

    def _resumed(self) -> None:
        self._on_resume()

    def _lost(self) -> None:
        if self._transport is not None:  # the reader went away; detach() clears it first
            self._on_gone()

    async def attach(self) -> None:
        """From now on write through the event loop, never blocking it."""
        from mcpeek.inspector.proxy.pipes import connect_writer, is_stream_fd

        if self._transport is not None or not is_stream_fd(self._fd):
            return  # a regular file never blocks: plain writes are fine
        with contextlib.suppress(OSError):
            self._blocking = os.get_blocking(self._fd)
        protocol = _Flow(self._paused, self._resumed, self._lost)
        try:
            self._transport = await connect_writer(
                asyncio.get_running_loop(), self._fd, lambda: protocol
            )
        except (OSError, ValueError):
            return
        self._protocol = protocol

    async def detach(self, timeout: float = 2.0) -> None:
        """Back to plain writes: give what is queued a moment to drain, no more."""
        transport, protocol = self._transport, self._protocol
        self._transport = self._protocol = None
        if transport is None or protocol is None:
            return
        transport.close()
        try:
            await asyncio.wait_for(protocol.closed, timeout)
        except TimeoutError:
            transport.abort()
        if self._blocking is not None:
            with contextlib.suppress(OSError):
                os.set_blocking(self._fd, self._blocking)

    # -- writing --------------------------------------------------------------------
    def passthrough(self, chunk: bytes) -> None:
        """Relay a chunk of the server's stderr, then any of our lines it held up."""
        if not chunk:
            return
        self._write(chunk, own=False)
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
        if self.dropped:
            self.dropped, dropped = 0, self.dropped
            self._write(
                f"mcpeek: {dropped} lines of mcpeek's own output were dropped: "
                "nothing was reading stderr\n".encode()
            )

    def _write(self, data: bytes, *, own: bool = True) -> None:
        transport = self._transport
        if transport is not None and not transport.is_closing():
            if own and transport.get_write_buffer_size() > OWN_BACKLOG:
                self.dropped += 1
                return
            transport.write(data)
            return
        view = memoryview(data)
        try:
            while view:
                try:
                    view = view[os.write(self._fd, view) :]
                except BlockingIOError:
                    # A non-blocking stderr that is full: wait a little, once.
                    if self._stalled or not select.select([], [self._fd], [], 1.0)[1]:
                        self._stalled = True
                        self.dropped += 1
                        return
        except OSError:
            pass  # stderr gone (closed pipe): nothing better to do than go on
        finally:
            view.release()


class _LogLines(logging.Handler):
    """A library's log records said as mcpeek's own one-line messages: no traceback,
    the exception's type and message on the same line; below ERROR only when not quiet."""

    def __init__(self, console: Console) -> None:
        super().__init__(logging.WARNING)
        self.console = console

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = record.getMessage()
        except (TypeError, ValueError):
            text = str(record.msg)
        exc = record.exc_info[1] if record.exc_info else None
        if exc is not None:
            detail = getattr(exc, "message", None) or str(exc)
            text += f" ({type(exc).__name__}: {detail})"
        line = " ".join(text.split())  # multi-line library messages, on one line
        self.console.say(f"{record.name}: {line}", force=record.levelno >= logging.ERROR)


@contextlib.contextmanager
def library_logs(
    console: Console, names: tuple[str, ...] = ("aiohttp", "asyncio")
) -> Iterator[None]:
    """While in the block, these loggers speak through ``console`` and nowhere else
    (Python's last-resort handler would print their tracebacks on stderr)."""
    handler = _LogLines(console)
    saved = []
    for name in names:
        logger = logging.getLogger(name)
        saved.append((logger, logger.propagate, logger.level))
        logger.addHandler(handler)
        logger.propagate = False
        logger.setLevel(logging.WARNING)
    try:
        yield
    finally:
        for logger, propagate, level in saved:
            logger.removeHandler(handler)
            logger.propagate = propagate
            logger.setLevel(level)
