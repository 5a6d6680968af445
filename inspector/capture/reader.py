"""Stream records back from a capture file.

A reader never raises on what it finds *inside* a file: a line that is not a
record is skipped and noted in :attr:`CaptureReader.problems`, an unknown
record kind or field is ignored (forward compatibility), and an incomplete
last line is left alone (the writer crashed, or is still writing; in follow
mode the reader waits for the rest). A gzip file that is truncated or corrupt
gives the records before the damage, and the damage is noted. It raises
:class:`CaptureError`, with a message meant for the user, only when the file
as a whole cannot be read: it is missing, it is damaged before its header
line, it is not a capture, or it was written by a newer mcpeek.
"""

from __future__ import annotations

import base64
import binascii
import gzip
import os
import time
import zlib
from collections.abc import Callable, Generator, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import BinaryIO

import msgspec

from mcpeek.inspector.capture.opening import (
    CaptureError,
    chunk_reader,
    open_capture,
    salvage_reader,
    why_reading_stopped,
)
from mcpeek.inspector.capture.polling import Polling
from mcpeek.inspector.records import FORMAT_NAME, FORMAT_VERSION, KNOWN_KINDS, AnyRecord, Header

# CaptureError is raised here too, and imported from here by most of its callers.
__all__ = ["MAX_HEADER_LINE", "CaptureError", "CaptureReader", "read_records"]

# The header line is short (its longest field is the wrapped command): this much
# data without a line end is not a capture (a binary file, /dev/zero…).
MAX_HEADER_LINE = 1 << 20
# A UTF-8 byte order mark, which an editor may put before the header line when it
# saves a capture: RFC 8259 section 8.1 lets a JSON parser ignore it, and so does this one.
UTF8_BOM = b"\xef\xbb\xbf"
UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")  # an editor's "Unicode": not JSON Lines (RFC 8259 8.1)


class _Kind(msgspec.Struct):
    k: object = None


class CaptureReader:
    """Reads one capture file: ``header`` first, then :meth:`records`.

    ``follow`` keeps reading as the file grows, until ``stop()`` returns true
    (checked between polls) or, with ``idle_timeout``, until nothing new has
    arrived for that many seconds. ``renamed_to``: the name the file takes if it
    is renamed before it is opened (a capture written beside the one it replaces,
    ``--force``, takes that one's name as soon as the proxy runs).
    """

    def __init__(
        self, path: str | os.PathLike[str], *, renamed_to: str | os.PathLike[str] | None = None
    ) -> None:
        self.path = Path(path)
        self.renamed_to = Path(renamed_to) if renamed_to is not None else None
        self.header: Header | None = None
        self.problems: list[str] = []
        self._decoder = msgspec.json.Decoder(AnyRecord)
        self._kind_decoder = msgspec.json.Decoder(_Kind)
        self._line_no = 0
        self.bytes_read = 0  # of the (decompressed) file, for progress indicators

    def records(
        self,
        *,
        follow: bool = False,
        stop: Callable[[], bool] | None = None,
        poll_interval: float | Polling = 0.05,
        idle_timeout: float | None = None,
    ) -> Iterator[AnyRecord]:
        """Yield every record after the header (the header is in :attr:`header`).
        ``poll_interval``: seconds between looks while following, or a :class:`Polling`."""
        read_error: str | None = None
        polling = poll_interval if isinstance(poll_interval, Polling) else Polling(poll_interval)
        with ExitStack() as files:
            stream = self._open()
            files.callback(stream.close)
            salvage = isinstance(stream, gzip.GzipFile)
            read = chunk_reader(stream)
            # An unfinished line: grown in place (a 16 MB line is one block, freed whole,
            # not 16 pieces and their join); only the new chunk is scanned for its end.
            unfinished = bytearray()
            last_data = time.monotonic()
            while True:
                try:
                    chunk = read()
                except (OSError, EOFError, zlib.error) as exc:  # BadGzipFile is an OSError
                    if salvage and isinstance(exc, zlib.error):
                        salvage = False  # read again what the failed read decompressed
                        read = salvage_reader(self.path, files, self.bytes_read)
                        continue
                    read_error = why_reading_stopped(exc)
                    self.problems.append(f"read stopped: {read_error}")
                    chunk = b""
                    follow = False
                if chunk:
                    self.bytes_read += len(chunk)
                    last_data = time.monotonic()
                    polling.came()
                    cut = chunk.rfind(b"\n") + 1
                    if not cut:
                        unfinished += chunk
                        if self.header is None and self.bytes_read > MAX_HEADER_LINE:
                            raise CaptureError(
                                f"{self.path}: not an mcpeek capture (no line end in its "
                                f"first {MAX_HEADER_LINE >> 20} MiB)"
                            )
                        continue
                    block: bytes | bytearray = chunk[:cut]
                    if unfinished:
                        unfinished += block
                        block = unfinished
                        unfinished = bytearray()
                    if cut < len(chunk):
                        unfinished += chunk[cut:]
                    # The block goes before its records are handled, and each record
                    # once it was: a 16 MB line is not kept twice while it is checked.
                    decoded = self._decode_block(block)
                    del block, chunk
                    decoded.reverse()
                    while decoded:
                        yield decoded.pop()
                    continue
                if not follow:
                    break
                if stop is not None and stop():
                    break
                if idle_timeout is not None and time.monotonic() - last_data > idle_timeout:
                    break
                polling.idle()
            tail = bytes(unfinished)
            if tail.strip():
                self.problems.append(
                    f"line {self._line_no + 1}: incomplete last line ({len(tail)} bytes) ignored"
                )
        if self.header is None:
            if read_error is not None:
                raise CaptureError(f"{self.path}: cannot read: {read_error}")
            if self._line_no == 0 and self.bytes_read:
                raise CaptureError(
                    f"{self.path}: no complete line, not an mcpeek capture "
                    "(or one whose header is still being written)"
                )
            raise CaptureError(f"{self.path}: empty file, not an mcpeek capture")

    def stream(
        self,
        *,
        follow: bool = False,
        stop: Callable[[], bool] | None = None,
        poll_interval: float | Polling = 0.05,
        idle_timeout: float | None = None,
    ) -> Generator[Header | AnyRecord, None, None]:
        """The header, then every record: the order an Analyzer takes them in.

        :meth:`records` leaves the header in :attr:`header`, read with the first
        block; this yields it first, also for a capture that has no record yet.
        """
        records = self.records(
            follow=follow, stop=stop, poll_interval=poll_interval, idle_timeout=idle_timeout
        )
        for first in records:
            assert self.header is not None  # decoded from the line before any record
            yield self.header
            yield first
            yield from records
            return
        if self.header is not None:
            yield self.header

    def _open(self) -> BinaryIO | gzip.GzipFile:
        try:
            return open_capture(self.path)
        except CaptureError:
            # Gone since it was named: renamed (atomically), so its new name holds it.
            if self.renamed_to is None or self.path.exists():
                raise
            self.path = self.renamed_to  # (what later reads and messages name)
            return open_capture(self.path)

    def _decode_block(self, block: bytes | bytearray) -> list[AnyRecord]:
        """Whole lines: decoded in one call when they are all good records."""
        if self.header is not None and block:
            try:
                records = self._decoder.decode_lines(block)
            except (msgspec.MsgspecError, RecursionError):
                pass  # a bad, unknown or too deep line somewhere: take them one by one
            else:
                # (most captures hold no Base64: one C-speed search of the block)
                if b'"raw_b64"' not in block or not any(map(_bad_base64, records)):
                    self._line_no += block.count(b"\n")
                    return records
        decoded = []
        for line in block.split(b"\n")[:-1]:
            record = self._decode_line(line)
            if record is not None:
                decoded.append(record)
        return decoded

    def _decode_line(self, line: bytes | bytearray) -> AnyRecord | None:
        self._line_no += 1
        if self.header is None:
            self.header = self._decode_header(line)
            return None
        if not line.strip():
            return None
        try:
            record = self._decoder.decode(line)
            if _bad_base64(record):  # its bytes unknown: read as none, a line would be empty
                self.problems.append(f"line {self._line_no}: bad record: raw_b64 is not Base64")
                return None
            return record
        except msgspec.ValidationError as exc:
            kind = self._peek_kind(line)
            if isinstance(kind, str) and kind not in KNOWN_KINDS:
                return None  # a newer writer's record kind: ignored by design
            self.problems.append(f"line {self._line_no}: bad record: {exc}")
        except msgspec.DecodeError as exc:
            self.problems.append(f"line {self._line_no}: not JSON: {exc}")
        except RecursionError:
            self.problems.append(f"line {self._line_no}: bad record: JSON nested too deeply")
        return None

    def _peek_kind(self, line: bytes | bytearray) -> object:
        try:
            return self._kind_decoder.decode(line).k
        except (msgspec.MsgspecError, RecursionError):
            return None

    def _decode_header(self, line: bytes | bytearray) -> Header:
        try:
            raw = msgspec.json.decode(line.removeprefix(UTF8_BOM))
        except (msgspec.DecodeError, RecursionError):
            raw = None
        if not isinstance(raw, dict) and line.startswith(UTF16_BOMS):
            raise CaptureError(
                f"{self.path}: saved as UTF-16 text (by an editor?); a capture is UTF-8: "
                "save it as UTF-8"
            )
        if not isinstance(raw, dict) or raw.get("format") != FORMAT_NAME:
            raise CaptureError(f"{self.path}: not an mcpeek capture (no capture header line)")
        version = raw.get("v")
        if not isinstance(version, int) or isinstance(version, bool):
            raise CaptureError(f"{self.path}: capture header has no valid format version")
        if version < 1:
            raise CaptureError(f"{self.path}: capture format version {version} does not exist")
        if version > FORMAT_VERSION:
            raise CaptureError(
                f"{self.path}: capture format version {version} is newer than this mcpeek "
                f"reads (up to {FORMAT_VERSION}); upgrade mcpeek to read it"
            )
        try:
            return msgspec.convert(raw, Header)
        except msgspec.ValidationError as exc:
            raise CaptureError(f"{self.path}: bad capture header: {exc}") from None


def read_records(path: str | os.PathLike[str]) -> tuple[Header, list[AnyRecord], list[str]]:
    """Read a whole capture: its header, its records and the problems met."""
    reader = CaptureReader(path)
    records = list(reader.records())
    assert reader.header is not None  # records() raises otherwise
    return reader.header, records, reader.problems


def _bad_base64(record: AnyRecord) -> bool:
    """Whether ``record`` gives its bytes as Base64 that does not decode."""
    encoded = getattr(record, "raw_b64", None)
    if encoded is None or getattr(record, "raw", None) is not None:
        return False  # (``raw`` is what is read when both are given)
    try:
        base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        return True
    return False
