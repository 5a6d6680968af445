"""A message holding a long ASCII text, encoded and written a slice at a time.

msgspec encodes a batch into one buffer: for a 16 MB message, 16 MB of new
memory, mapped on its own (:mod:`mcpeek.inspector.memtune`), whose pages the
kernel faults in one by one (4096 faults, about 7 ms on the VMs measured,
more than the escaping itself), to be handed to the kernel in one write and
unmapped. The writer instead escapes such a message's text 1 MiB at a time
and writes each slice as soon as it is escaped, in memory the heap reuses.

The bytes are the same: JSON escapes each character on its own, so the
escapes of the slices, joined, are the escape of the whole text (a ``str``
slice never cuts a character). An ASCII text cannot fail to encode, and the
rest of the batch is encoded before anything is written: a batch that fails
to encode still writes nothing, and one that does not is written whole before
the writer returns, as the single write did (a crash in between leaves a torn
last line, which readers ignore, as a short write did).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import msgspec

from mcpeek.inspector.records import Msg, SeqRecord

#: Texts this long or longer are written in slices (4 MiB: the size from which a
#: buffer is mapped on its own, see memtune.BIG_BLOCK).
SLICED = 4 << 20
SLICE = 1 << 20
# Where the text goes in the encoded record: the JSON escape of any string
# value turns its quotes into \", so this can only be the field itself.
_EMPTY_RAW = b',"raw":""'
_BEFORE_TEXT = len(_EMPTY_RAW) - 1  # up to and including the text's opening quote


def is_sliced(record: SeqRecord) -> bool:
    """Whether ``record`` (redacted, as it will be written) is written in slices."""
    if type(record) is not Msg:
        return False
    raw = record.raw
    return raw is not None and len(raw) >= SLICED and raw.isascii()


def parts(encoder: msgspec.json.Encoder, records: Sequence[SeqRecord]) -> list[bytes | str]:
    """The lines of ``records`` as parts to write in order: ``bytes`` as they are, and
    each long text (a ``str``) to be escaped by :func:`escaped` in its place."""
    out: list[bytes | str] = []
    group: list[SeqRecord] = []
    tail = b""  # the end of the last sliced record's line, after its text
    for record in records:
        if not is_sliced(record):
            group.append(record)
            continue
        assert type(record) is Msg and record.raw is not None
        text = record.raw
        record.raw = ""
        try:
            line = encoder.encode(record)
        finally:
            record.raw = text
        at = line.index(_EMPTY_RAW) + _BEFORE_TEXT
        out.append(tail + (encoder.encode_lines(group) if group else b"") + line[:at])
        out.append(text)
        tail = line[at:] + b"\n"
        group = []
    out.append(tail + (encoder.encode_lines(group) if group else b""))
    return out


def escaped(encoder: msgspec.json.Encoder, text: str) -> Iterator[memoryview]:
    """The JSON escape of ``text`` (an ASCII ``str``, without its quotes), a slice at
    a time: write each before taking the next, and the memory is reused."""
    for start in range(0, len(text), SLICE):
        yield memoryview(encoder.encode(text[start : start + SLICE]))[1:-1]
