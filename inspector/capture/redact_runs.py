"""Runs of token characters in a long ASCII text, found a slice at a time.

Every secret the detector looks for overlaps a run of 16 or more token
characters (see :mod:`mcpeek.inspector.capture.redact_detect`). A short text
is mapped whole through ``str.translate``; for a long one that costs 13
instructions a character (218 million for a 16 MB message), where
``bytes.translate`` costs about 3. Each 1 MiB slice is encoded (a copy at
memcpy speed: the text is ASCII) and mapped, so the extra memory is two
slices, never a second copy of the message.
"""

from __future__ import annotations

from collections.abc import Iterator

TOKEN_CHARS_ASCII = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_+=-"
RUN_LENGTH = 16
# bytes.translate table: token characters become 1, the rest 0.
_RUN_BYTES = bytes(1 if chr(i) in TOKEN_CHARS_ASCII else 0 for i in range(256))
_RUN = b"\x01" * RUN_LENGTH
SLICE = 1 << 20


def long_runs(text: str, step: int = SLICE) -> Iterator[tuple[int, int]]:
    """The maximal runs of :data:`RUN_LENGTH` or more token characters of the
    ASCII ``text``, in order, as (start, end); a run may span slices."""
    open_at = -1  # where a run still going on at the end of the last slice began
    for base in range(0, len(text), step):
        marks = text[base : base + step].encode("ascii").translate(_RUN_BYTES)
        at = 0
        if open_at >= 0:
            end = marks.find(b"\x00")
            if end < 0:
                continue  # the run goes on through this whole slice
            if base + end - open_at >= RUN_LENGTH:
                yield open_at, base + end
            open_at = -1
            at = end
        while (at := marks.find(_RUN, at)) >= 0:
            end = marks.find(b"\x00", at)
            if end < 0:  # it goes on into the next slice
                open_at = base + at
                break
            yield base + at, base + end
            at = end
        else:
            # Token characters at the slice's end may begin a run that the
            # next slice completes.
            tail = marks.rfind(b"\x00") + 1
            if tail < len(marks):
                open_at = base + tail
    if open_at >= 0 and len(text) - open_at >= RUN_LENGTH:
        yield open_at, len(text)
