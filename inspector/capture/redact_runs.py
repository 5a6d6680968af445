"""Runs of token characters in a long ASCII text, found a slice at a time.

Every secret the detector looks for overlaps a run of 16 or more token
characters (see :mod:`mcpeek.inspector.capture.redact_detect`). A short text
is mapped whole through ``str.translate``; for a long one that costs 13
instructions a character (218 million for a 16 MB message), where
``bytes.translate`` costs about 3. Each 1 MiB slice is encoded (a copy at
memcpy speed: the text is ASCII) and mapped, so the extra memory is two
slices, never a second copy of the message.

A run inside a Base64 blob (an image, a file) cannot be told from the blob's
own bytes, and a 16 MB standard Base64 blob, whose "/" cuts a run every 64
characters or so, made 200 000 windows that covered it whole: every selected
pattern then ran over all of it (2 s a message). :func:`runs_outside_blobs`
leaves out the runs of a blob, a stretch of :data:`BLOB_LENGTH` or more token
characters and "/", found the same way first.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import compress

TOKEN_CHARS_ASCII = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_+=-"
RUN_LENGTH = 16
# bytes.translate table: token characters become 1, the rest 0.
RUN_TABLE = bytes(1 if chr(i) in TOKEN_CHARS_ASCII else 0 for i in range(256))
SLICE = 1 << 20
_PROBE = 4096  # bytes of a slice looked at first, to tell whether it may be all run
#: A stretch of token characters and "/" this long or longer is a Base64 blob.
BLOB_LENGTH = 8192
_BLOB_BYTES = bytes(1 if chr(i) in TOKEN_CHARS_ASCII + "/" else 0 for i in range(256))


def between_blobs(
    text: str, step: int = SLICE, blob_length: int = BLOB_LENGTH
) -> list[tuple[int, int]]:
    """The stretches of the ASCII ``text`` outside its blobs, as (start, end), in order
    (some may be empty): each blob lies between two of them."""
    segments = []
    at = 0
    for start, end in long_runs(text, step, _BLOB_BYTES, blob_length):
        segments.append((at, start))
        at = end
    segments.append((at, len(text)))
    return segments


def runs_outside_blobs(
    text: str,
    step: int = SLICE,
    blob_length: int = BLOB_LENGTH,
    segments: list[tuple[int, int]] | None = None,
) -> Iterator[tuple[int, int]]:
    """:func:`long_runs` of the ASCII ``text``, but for those inside a blob
    (``segments``: its :func:`between_blobs`, if made)."""
    if segments is None:
        segments = between_blobs(text, step, blob_length)
    for at, end in segments:
        if at < end:
            yield from ((at + a, at + b) for a, b in long_runs(text[at:end], step))


def _run_prefix(piece: bytes, ones: bytes, probe: int = _PROBE) -> int:
    """How much of ``piece``'s start is run characters (``ones``), up to its first
    quote (0 unless its first ``probe`` bytes are all run): in a JSON message a blob
    is a string, and a slice that begins in one is told to be run up to its end by
    deleting those characters (0.4 ms a MiB) instead of mapping them (0.66)."""
    if piece[:probe].translate(None, ones):
        return 0  # (most slices of text: a few µs)
    quote = piece.find(b'"')  # never a run's character
    end = len(piece) if quote < 0 else quote
    return 0 if piece[:end].translate(None, ones) else end


def long_runs(
    text: str,
    step: int = SLICE,
    table: bytes = RUN_TABLE,
    length: int = RUN_LENGTH,
    probe: int = _PROBE,
) -> Iterator[tuple[int, int]]:
    """The maximal runs of :data:`RUN_LENGTH` (``length``) or more token characters
    (those ``table`` maps to 1) of the ASCII ``text``, in order, as (start, end);
    a run may span slices (``probe``: see :func:`_run_prefix`)."""
    run = b"\x01" * length
    ones = bytes(compress(range(256), table))  # the characters a run is made of
    open_at = -1  # where a run still going on at the end of the last slice began
    for at_slice in range(0, len(text), step):
        piece = text[at_slice : at_slice + step].encode("ascii")
        skip = _run_prefix(piece, ones, probe)
        if skip and open_at < 0:
            open_at = at_slice  # a run begins here (one from the last slice is open)
        if skip == len(piece):
            continue
        base = at_slice + skip
        marks = piece[skip:].translate(table)  # (piece[0:] is piece: no copy)
        at = 0
        if open_at >= 0:
            end = marks.find(b"\x00")
            if end < 0:
                continue  # the run goes on through this whole slice
            if base + end - open_at >= length:
                yield open_at, base + end
            open_at = -1
            at = end
        while (at := marks.find(run, at)) >= 0:
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
    if open_at >= 0 and len(text) - open_at >= length:
        yield open_at, len(text)
