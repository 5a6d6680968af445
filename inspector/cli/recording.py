"""A proxy's capture: opened with the user's words on refusal, its errors told once.

Recording never stops the traffic (forward first, observe second): when a
write fails (a full disk) or recording hits a bug, the proxy says so once
per distinct error, relays on, and at the end says that the capture is
incomplete rather than "recorded".
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Iterable
from pathlib import Path

from mcpeek.inspector.capture.files import CaptureFileError
from mcpeek.inspector.capture.writer import CaptureWriter
from mcpeek.inspector.cli.base import UsageError, directory
from mcpeek.inspector.cli.otlp_live import OtlpFollower

#: In a -w name: the first free number from 1 (a file absent or empty, not being written).
NUMBER = "{n}"
#: In a -w name: this mcpeek's process id.
PID = "{pid}"
#: How far {n} counts before giving up (a directory of that many captures is a mistake).
LAST_NUMBER = 9999


def add_capture_options(parser: argparse.ArgumentParser) -> None:
    """``-w FILE``, ``--force`` and ``--home DIR``: where a proxy records (stdio, http)."""
    parser.add_argument(
        "-w",
        "--write",
        metavar="FILE",
        type=Path,
        help="capture file to write (default: a new file in the capture directory); "
        "one that holds data is refused unless --force; {n} in the name takes the first "
        "free number (a client that starts the server twice gets two files), {pid} "
        "mcpeek's process id",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="overwrite the -w file if it holds data (never one another mcpeek is writing)",
    )
    parser.add_argument(
        "--home",
        metavar="DIR",
        type=directory,
        help="capture directory for this run (default: $MCPEEK_HOME or the user state "
        "directory; -w wins)",
    )


def open_capture(
    path: Path,
    *,
    force: bool,
    transport: str,
    target: list[str] | str,
    redact: bool = True,
    extra_redacted: Iterable[str] = (),
) -> CaptureWriter:
    """The writer on ``path``, or a UsageError saying why it cannot be (one line).

    ``{pid}`` in the name becomes this process's id, and ``{n}`` the first number
    whose file can be a new capture: a client that starts the server command
    twice (the TypeScript SDK's ``auto`` probe, then its session) gets two
    captures, where one name would refuse the second run (it holds data, or it is
    still being written) and so break the client's real session."""
    extra_redacted = list(extra_redacted)
    if extra_redacted:
        _check_redacted(extra_redacted, redact)
    name = str(path).replace(PID, str(os.getpid()))
    if NUMBER not in name:
        return _open(Path(name), force, transport, target, redact, extra_redacted)
    if force:
        raise UsageError(f"--force does nothing with {NUMBER} in -w: it takes a new number")
    refusal: CaptureFileError | None = None
    for number in range(1, LAST_NUMBER + 1):
        candidate = Path(name.replace(NUMBER, str(number)))
        try:
            return CaptureWriter(
                candidate,
                transport=transport,
                target=target,
                redact=redact,
                extra_redacted=extra_redacted,
            )
        except CaptureFileError as exc:  # taken (data, a live writer) or unusable: the next
            refusal = exc
        except OSError as exc:
            raise UsageError(
                f"cannot write the capture {candidate}: {exc.strerror or exc}"
            ) from None
    raise UsageError(f"cannot write the capture: no free {NUMBER} up to {LAST_NUMBER} ({refusal})")


def _check_redacted(names: list[str], redact: bool) -> None:
    """``--redact-header`` names must be header names, and redaction on: a name that
    can match no header ("X-Api-Key:") or ``--no-redact`` would leave the secret the
    user meant to hide in the capture."""
    from mcpeek.inspector.replay.replay_headers import TOKEN

    for name in names:
        if not TOKEN.fullmatch(name):
            raise UsageError(
                f"--redact-header {name!r} is not a header name (a name such as X-Api-Key, "
                "without ':' or spaces)"
            )
    if not redact:
        raise UsageError("--redact-header does nothing with --no-redact: give one or the other")


def _open(
    path: Path,
    force: bool,
    transport: str,
    target: list[str] | str,
    redact: bool,
    extra_redacted: Iterable[str],
) -> CaptureWriter:
    try:
        return CaptureWriter(
            path,
            force=force,
            transport=transport,
            target=target,
            redact=redact,
            extra_redacted=extra_redacted,
        )
    except CaptureFileError as exc:
        raise UsageError(f"cannot write the capture: {exc}") from None
    except OSError as exc:
        raise UsageError(f"cannot write the capture {path}: {exc.strerror or exc}") from None


class RecordingErrors:
    """Tells each distinct recording error once, through ``say``; remembers there was one.

    ``on_cut`` is called, once, when a write to the capture fails: what reads the
    capture as it grows (the live checks) learns at once that it stops short.
    """

    def __init__(
        self,
        writer: CaptureWriter,
        say: Callable[[str], None],
        on_cut: Callable[[], None] | None = None,
    ) -> None:
        self._writer = writer
        self._say = say
        self._on_cut = on_cut
        self._told: set[str] = set()

    def __call__(self, exc: BaseException) -> None:
        if isinstance(exc, OSError) and exc is self._writer.error:
            if self._on_cut is not None:
                on_cut, self._on_cut = self._on_cut, None
                on_cut()
            text = (
                f"cannot write the capture {self._writer.path} ({exc.strerror or exc}); "
                "traffic still flows, unrecorded"
            )
        else:
            text = (
                f"internal error while recording ({type(exc).__name__}: {exc}); traffic still flows"
            )
        if text not in self._told:
            self._told.add(text)
            self._say(text)

    @property
    def incomplete(self) -> bool:
        """Whether records were lost (a write failed, or an error kept some out)."""
        if self._writer.error is not None:
            self(self._writer.error)  # (once: e.g. met by a violation record, untold)
        return bool(self._told)


def start_run(writer: CaptureWriter, otlp: OtlpFollower, *, quiet: bool = False) -> None:
    """The run has started (the server spawned, the proxy listening): the capture
    takes its name (``-w FILE --force`` replaces the old one now), and only then is
    it followed by that name (``--otlp``), never the old capture. A UsageError says
    why it cannot take it: the writer is not :attr:`~CaptureWriter.committed`, the
    caller discards the new capture, and the old one stays as it was."""
    try:
        writer.commit()
    except OSError as exc:
        raise UsageError(f"cannot replace {writer.path}: {exc.strerror or exc}") from None
    otlp.start(writer.path, quiet=quiet)
