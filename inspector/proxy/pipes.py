"""Attach the process's own stdin/stdout to the event loop, whatever they are.

Clients give a wrapped server pipes, but a user may also run
``mcpeek stdio -- server < requests.jsonl > out.txt``: asyncio's pipe
transports refuse regular files, so those get a reader thread (stdin) or
blocking writes (stdout), behind the same small interface.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import stat
import sys
import threading
from collections.abc import Callable
from typing import Any

CHUNK = 1 << 16
PIPE_SIZE = 1 << 20
F_SETPIPE_SZ = getattr(fcntl, "F_SETPIPE_SZ", 1031)


def widen_pipe(fd: int, size: int = PIPE_SIZE) -> None:
    """Ask for a bigger pipe buffer (Linux): fewer, larger reads and writes per message.

    Best effort: other systems, or a size above the user's limit, keep the default.
    """
    if not sys.platform.startswith("linux"):
        return
    try:
        if stat.S_ISFIFO(os.fstat(fd).st_mode):
            fcntl.fcntl(fd, F_SETPIPE_SZ, size)
    except OSError:
        pass


def is_stream_fd(fd: int) -> bool:
    """True for what the event loop can poll: pipes, sockets and terminals.

    Other character devices (``/dev/null``) are refused by epoll, and regular
    files are always "ready": both take the thread/blocking path.
    """
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or (stat.S_ISCHR(mode) and os.isatty(fd))


def widen_transport_pipe(transport: Any) -> None:
    """:func:`widen_pipe` for an asyncio pipe transport that may already be closed
    (a server that exits at once closes its pipes before we get to them)."""
    if transport is None or transport.is_closing():
        return
    with contextlib.suppress(ValueError, OSError, AttributeError):
        widen_pipe(transport.get_extra_info("pipe").fileno())


def printable(arg: str) -> str:
    """A command-line argument as text, even when it holds bytes that are not UTF-8."""
    return os.fsencode(arg).decode("utf-8", "backslashreplace")


def keep_blocking_modes(fds: tuple[int, ...]) -> dict[int, bool]:
    """The blocking mode of each fd, to restore at exit: asyncio makes our stdin and
    stdout non-blocking, and a terminal shared with the shell must not stay so."""
    modes = {}
    for fd in fds:
        with contextlib.suppress(OSError):
            modes[fd] = os.get_blocking(fd)
    return modes


def restore_blocking_modes(modes: dict[int, bool]) -> None:
    for fd, blocking in modes.items():
        with contextlib.suppress(OSError):
            os.set_blocking(fd, blocking)


def widen_reads(transport: Any) -> None:
    """Read up to a whole widened pipe per wake-up (asyncio reads 256 KiB by default)."""
    if hasattr(transport, "max_size"):
        transport.max_size = PIPE_SIZE


async def connect_reader(
    loop: asyncio.AbstractEventLoop, fd: int, factory: Callable[[], asyncio.Protocol]
) -> Any:
    """Feed ``fd`` to a protocol; returns an object with pause/resume_reading and close."""
    if is_stream_fd(fd):
        pipe = os.fdopen(fd, "rb", buffering=0, closefd=False)
        transport, _ = await loop.connect_read_pipe(factory, pipe)
        return transport
    return ThreadReader(loop, fd, factory())


async def connect_writer(
    loop: asyncio.AbstractEventLoop, fd: int, factory: Callable[[], asyncio.Protocol]
) -> Any:
    if is_stream_fd(fd):
        pipe = os.fdopen(fd, "wb", buffering=0, closefd=False)
        transport, _ = await loop.connect_write_pipe(factory, pipe)
        return transport
    return BlockingWriter(fd, factory())


class ThreadReader:
    """Reads a regular file (or a closed fd) in a thread, honouring pause/resume.

    One chunk at a time: the thread reads the next chunk only once the loop
    has taken the last one and reading is not paused, so a huge file cannot
    pile up in memory ahead of a slow server.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop, fd: int, protocol: asyncio.Protocol):
        self._loop = loop
        self._fd = fd
        self._protocol = protocol
        self._running = threading.Event()
        self._running.set()
        self._taken = threading.Event()
        self._closing = False
        threading.Thread(target=self._pump, name="mcpeek-stdin", daemon=True).start()

    def _deliver(self, chunk: bytes) -> None:
        try:
            if not self._closing:  # (read as it was closed: never delivered, as a pipe's)
                self._protocol.data_received(chunk)
        finally:
            self._taken.set()

    def _pump(self) -> None:
        while not self._closing:
            self._running.wait()
            try:
                chunk = os.read(self._fd, CHUNK)
            except OSError:
                chunk = b""
            if not chunk:
                break
            self._taken.clear()
            self._loop.call_soon_threadsafe(self._deliver, chunk)
            self._taken.wait()
        if not self._closing:
            self._loop.call_soon_threadsafe(self._protocol.eof_received)

    def pause_reading(self) -> None:
        self._running.clear()

    def resume_reading(self) -> None:
        self._running.set()

    def is_closing(self) -> bool:
        return self._closing

    def close(self) -> None:
        if self._closing:
            return
        self._closing = True
        self._running.set()
        # As a pipe's transport does: the protocol learns that reading ended (the
        # relay then records what it holds of an unfinished line).
        self._loop.call_soon(self._protocol.connection_lost, None)


class BlockingWriter:
    """Blocking writes to a regular file: a file never applies back-pressure."""

    def __init__(self, fd: int, protocol: asyncio.Protocol) -> None:
        self._fd = fd
        self._protocol = protocol
        self._closing = False

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(self._fd, view) :]
        except OSError as exc:
            self.close(exc)

    def is_closing(self) -> bool:
        return self._closing

    def close(self, exc: Exception | None = None) -> None:
        if not self._closing:
            self._closing = True
            self._protocol.connection_lost(exc)
