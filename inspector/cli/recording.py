"""A proxy's capture: opened with the user's words on refusal, its errors told once.

Recording never stops the traffic (forward first, observe second): when a
write fails (a full disk) or recording hits a bug, the proxy says so once
per distinct error, relays on, and at the end says that the capture is
incomplete rather than "recorded".
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from mcpeek.inspector.capture.files import CaptureFileError
from mcpeek.inspector.capture.writer import CaptureWriter
from mcpeek.inspector.cli.base import UsageError


def open_capture(
    path: Path,
    *,
    force: bool,
    transport: str,
    target: list[str] | str,
    redact: bool = True,
    extra_redacted: Iterable[str] = (),
) -> CaptureWriter:
    """The writer on ``path``, or a UsageError saying why it cannot be (one line)."""
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
    """Tells each distinct recording error once, through ``say``; remembers there was one."""

    def __init__(self, writer: CaptureWriter, say: Callable[[str], None]) -> None:
        self._writer = writer
        self._say = say
        self._told: set[str] = set()

    def __call__(self, exc: BaseException) -> None:
        if isinstance(exc, OSError) and exc is self._writer.error:
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
