"""Append records to a capture file.

The writer numbers records (``seq``), stamps them (``t``), redacts secrets
(:mod:`.redact`: credential headers, query parameters, form bodies, JSON
members, what detect-secrets recognises), and hands each batch to the kernel
at once, in one ``os.write`` of whole lines (no fsync; a batch holding a text
of 4 MiB or more in a few, one per 1 MiB of it, see :mod:`.sliced`), as
``tcpdump -U`` does per packet: the proxies emit a batch right after forwarding the chunk it
came from, so a proxy killed with SIGKILL loses at most the record in flight,
and a crash leaves at most one incomplete last line, which readers ignore.
After a failed write (a full disk) nothing more is written, so that a torn
line stays the last one.

How the file is opened (0600, no symlinks, one writer): :mod:`.files`.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
from collections.abc import Iterable, Sequence
from pathlib import Path

import msgspec

from mcpeek.inspector import __version__
from mcpeek.inspector.capture.files import open_beside, open_for_writing, write_all
from mcpeek.inspector.capture.redact import Redactor
from mcpeek.inspector.capture.redact_rules import is_secret_header, marker
from mcpeek.inspector.capture.redact_targets import recorded_target
from mcpeek.inspector.capture.sliced import SLICED, escaped, is_sliced, parts
from mcpeek.inspector.records import Header, Http, Msg, SeqRecord, clock, store_header_bytes


def redact_value(value: str | bytes) -> str:
    """The marker that stands for a secret value (see :func:`redact_rules.marker`)."""
    return marker(value)


def redact_headers(
    headers: Iterable[tuple[str, str]], extra: Iterable[str] = ()
) -> list[tuple[str, str]]:
    """Lower-case header names and replace the values of credential headers."""
    names = frozenset(n.lower() for n in extra)
    out = []
    for name, value in headers:
        lname = name.lower()
        out.append((lname, marker(value) if is_secret_header(lname, names) else value))
    return out


def utc_timestamp() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class CaptureWriter:
    """Append-only writer of one capture file.

    ``redact`` switches redaction on (the default); ``extra_redacted`` adds
    header names to those redacted by their name. A file that already holds data is
    refused unless ``force`` (see :func:`~mcpeek.inspector.capture.files.open_for_writing`,
    which also says what else is refused: it raises ``CaptureFileError``).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        transport: str,
        target: list[str] | str,
        redact: bool = True,
        extra_redacted: Iterable[str] = (),
        force: bool = False,
    ) -> None:
        self.path = Path(path)
        fd = open_for_writing(self.path, force=force, empty=False)
        # --force on a file that holds data: the old capture stays (locked, as it
        # is) until the run has started (:meth:`commit`); until then the records
        # go to a new file beside it, which then takes its name.
        self._replaced: int | None = None
        self._beside: Path | None = None
        if os.fstat(fd).st_size:
            try:
                self._fd, self._beside = open_beside(self.path)
            except BaseException:
                os.close(fd)
                raise
            self._replaced = fd
        else:
            self._fd = fd
        self._encoder = msgspec.json.Encoder()
        self._next_seq = 1
        self.error: OSError | None = None
        self.redact = redact
        self._redactor = Redactor(extra_redacted) if redact else None
        self.closed = False
        self.committed = False  # commit() done: the run started, the capture has its name
        self.header = Header(
            created=utc_timestamp(),
            transport=transport,
            target=recorded_target(target, redact=redact),
            tool=f"mcpeek {__version__}",
            redacted=redact,
            redaction=self._redactor.info() if self._redactor is not None else None,
        )
        self._write_out(self._encoder.encode(self.header) + b"\n")

    @property
    def writing_path(self) -> Path:
        """The file the records go to now: :attr:`path`, or the file beside it that
        will replace it (a reader that opens it keeps reading it once renamed)."""
        return self._beside or self.path

    @property
    def replacing(self) -> bool:
        """Whether the records go beside the file they are to replace (``--force``),
        the run not started yet (or its :meth:`commit` failed)."""
        return self._beside is not None

    def commit(self) -> None:
        """The run has started: the capture takes its name, replacing the file that
        held data (``--force``). Nothing to do otherwise, or a second time."""
        if self._beside is not None:
            # Failing, this leaves both files as they were: discard() then removes the new.
            os.replace(self._beside, self.path)
            self._beside = None
            if self._replaced is not None:
                os.close(self._replaced)  # its lock goes with it: the name is ours now
                self._replaced = None
        self.committed = True

    @property
    def record_count(self) -> int:
        """Records written after the header."""
        return self._next_seq - 1

    def write(self, record: SeqRecord) -> SeqRecord:
        """Number, stamp and write ``record``; returns it (now with its ``seq``)."""
        self.write_many((record,))
        return record

    def write_many(self, records: Sequence[SeqRecord]) -> None:
        """Number, stamp and write a batch, encoded in one call and written in one
        system call (the relay's hot path)."""
        if self.closed:
            raise ValueError(f"capture {self.path} is closed")
        if self.error is not None:
            raise self.error
        seq = self._next_seq
        now = 0.0
        redactor = self._redactor
        sliced = False
        for record in records:
            record.seq = seq
            seq += 1
            if not record.t:
                now = now or clock()
                record.t = now
            if redactor is not None:
                redactor.record(record)
            if type(record) is Msg:
                # Inline (this runs for every message): most are far too short.
                if record.raw is not None and len(record.raw) >= SLICED:
                    sliced = sliced or is_sliced(record)
            elif type(record) is Http and record.headers:
                if redactor is not None:
                    if redactor.headers(record):
                        continue  # all ASCII: nothing to store in Base64
                else:
                    # Names lower-cased, as the format says, and plain ``str``s
                    # (msgspec refuses the ``istr`` names aiohttp hands over).
                    record.headers = [(name.lower(), value) for name, value in record.headers]
                # Never a reason to lose the record: values that are not UTF-8 go
                # in Base64 (``headers_b64``), as ``raw_b64`` does for messages.
                store_header_bytes(record)
        if sliced:  # a long text: escaped and written a slice at a time (see .sliced)
            pieces = parts(self._encoder, records)
            self._next_seq = seq
            for piece in pieces:
                if isinstance(piece, bytes):
                    if piece:
                        self._write_out(piece)
                else:
                    for view in escaped(self._encoder, piece):
                        self._write_out(view)
            return
        encoded = self._encoder.encode_lines(records)
        self._next_seq = seq  # only once encoded: a failed batch leaves no gap in seq
        self._write_out(encoded)

    def _write_out(self, data: bytes | memoryview) -> None:
        try:
            write_all(self._fd, data)
        except OSError as exc:
            self.error = exc
            raise

    def discard(self) -> None:
        """Close and remove the file: the run that was to fill it did not start, and
        an empty capture must not be left behind (unless the name now holds another
        file)."""
        if self.closed:
            return
        if self._beside is not None:  # the old capture was never replaced: it stays
            with contextlib.suppress(OSError):
                os.unlink(self._beside)
            self._beside = None
            self._close_files()
            return
        try:
            mine = os.fstat(self._fd)
            found = os.lstat(self.path)
            if (found.st_dev, found.st_ino) == (mine.st_dev, mine.st_ino):
                os.unlink(self.path)  # still locked: no other writer has it open
        except OSError:
            pass  # gone already, or not ours to remove
        self.close()

    def close(self) -> None:
        """Close the file, which releases its lock (a run that ends without a
        :meth:`commit` did run: its capture replaces the old one now)."""
        if self.closed:
            return
        try:
            self.commit()
        finally:
            self._close_files()

    def _close_files(self) -> None:
        self.closed = True
        if self._replaced is not None:
            os.close(self._replaced)
            self._replaced = None
        os.close(self._fd)

    def __enter__(self) -> CaptureWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
