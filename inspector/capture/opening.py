"""Opening a capture's bytes: a regular file only, gzip by its first bytes, and a
damaged gzip stream read again up to the damage.

What :class:`~mcpeek.inspector.capture.reader.CaptureReader` reads lines from;
it decodes them. Only a file that cannot be read as a whole raises
:class:`CaptureError`.
"""

from __future__ import annotations

import gzip
import os
import zlib
from collections.abc import Callable
from contextlib import ExitStack
from functools import partial
from pathlib import Path
from typing import BinaryIO

from mcpeek.inspector.capture.files import O_CLOEXEC, O_NONBLOCK, kind_of

CHUNK_SIZE = 1 << 20
# A gzip stream is read in smaller steps with ``read1()``: when it turns out
# truncated or corrupt, a read loses all it had decompressed (``read()`` of a
# whole chunk would drop everything before the damage). A truncated stream
# loses nothing this way; a corrupt one is read again up to the damage in
# ``SALVAGE_CHUNK_SIZE`` steps (see :func:`salvage_reader`).
GZIP_CHUNK_SIZE = 1 << 16
SALVAGE_CHUNK_SIZE = 64
GZIP_MAGIC = b"\x1f\x8b"  # a gzip stream, whatever the file's name says


class CaptureError(Exception):
    """The file cannot be read as a capture; ``str()`` is the user-facing reason."""


def open_capture(path: Path) -> BinaryIO | gzip.GzipFile:
    """The file, read as gzip when its first bytes say so: the name does not decide
    (mcpeek writes plain JSON Lines, whatever ``-w`` names the file)."""
    stream = open_regular(path)
    try:
        magic = stream.read(len(GZIP_MAGIC))
        stream.seek(0)
    except OSError as exc:
        stream.close()
        raise CaptureError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if magic == GZIP_MAGIC:
        return OwningGzipFile(stream)
    return stream


def open_regular(path: Path) -> BinaryIO:
    """Open the file if it is a regular file; anything else (a FIFO, a device, a
    directory, a socket) is refused, and a FIFO is never opened: that would block
    until a writer came, or steal a waiting writer's data."""
    try:
        kind = kind_of(os.stat(path).st_mode)
        # Non-blocking, in case a FIFO took the file's place since the stat.
        fd = os.open(path, os.O_RDONLY | O_NONBLOCK | O_CLOEXEC)
    except FileNotFoundError:
        raise CaptureError(f"{path}: no such file") from None
    except OSError as exc:
        raise CaptureError(f"{path}: cannot open: {exc.strerror or exc}") from None
    if kind is None:
        kind = kind_of(os.fstat(fd).st_mode)
    if kind is not None:
        os.close(fd)
        raise CaptureError(f"{path}: is {kind}, not a capture file")
    if O_NONBLOCK:
        os.set_blocking(fd, True)
    return open(fd, "rb")


def chunk_reader(stream: BinaryIO | gzip.GzipFile) -> Callable[[], bytes]:
    """The next chunk of ``stream``'s bytes on each call (``b""`` at its end)."""
    if isinstance(stream, gzip.GzipFile):
        return partial(stream.read1, GZIP_CHUNK_SIZE)
    return partial(stream.read, CHUNK_SIZE)


def salvage_reader(path: Path, files: ExitStack, offset: int) -> Callable[[], bytes]:
    """Read a damaged gzip file again from ``offset`` in tiny steps, up to the damage.

    The read that met the damage lost all it had decompressed, up to
    ``GZIP_CHUNK_SIZE`` bytes of whole records; reading them again this way
    loses under ``SALVAGE_CHUNK_SIZE`` bytes. Opening and seeking happen in
    the first read, so that their errors are met (and noted) like any other.
    """
    streams: list[gzip.GzipFile] = []

    def read() -> bytes:
        if not streams:
            streams.append(files.enter_context(OwningGzipFile(open_regular(path))))
            streams[0].seek(offset)
        return streams[0].read1(SALVAGE_CHUNK_SIZE)

    return read


class OwningGzipFile(gzip.GzipFile):
    """A GzipFile that closes the file it reads (``GzipFile(fileobj=…)`` leaves it open)."""

    def __init__(self, raw: BinaryIO) -> None:
        super().__init__(fileobj=raw, mode="rb")
        self._raw = raw

    def close(self) -> None:
        try:
            super().close()
        finally:
            self._raw.close()


def why_reading_stopped(exc: BaseException) -> str:
    """Why reading stopped, for the user: damaged gzip data is said to be so."""
    if isinstance(exc, zlib.error):
        return f"corrupt compressed data ({exc})"
    if isinstance(exc, EOFError):
        return f"truncated compressed file ({exc})"
    return str(exc)
