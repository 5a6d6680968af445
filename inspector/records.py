"""Capture records: the unit of everything mcpeek observes.

A proxy turns wire activity into records; a capture file is those records as
JSON Lines (see docs/capture-format.md); the analyser, ``lint``, the TUI and
replay all consume the same records. One msgspec Struct per record kind,
tagged by the ``k`` field, so a line encodes and decodes in one call and the
field order on disk is stable (``k`` first, then the fields as declared).

Bytes are the truth: a ``msg`` keeps the exact text that crossed the wire in
``raw``, or, when those bytes are not valid UTF-8, their Base64 in ``raw_b64``.
:func:`wire_bytes` gives the bytes back either way.
"""

from __future__ import annotations

import base64
import binascii
from typing import Literal

import msgspec

FORMAT_NAME = "mcpeek-capture"
FORMAT_VERSION = 1

Direction = Literal["c2s", "s2c"]


class Record(msgspec.Struct, tag_field="k", omit_defaults=True, kw_only=True, gc=False):
    """Base of every record kind; ``seq`` and ``t`` are set by the writer.

    Optional fields are omitted from the file while they hold their default
    (``None``/``False``), so the fields a kind always carries have none.
    """


class Header(Record, tag="header", omit_defaults=False):
    format: str = FORMAT_NAME
    v: int = FORMAT_VERSION
    created: str = ""
    transport: str = "stdio"
    target: list[str] | str = ""
    tool: str = ""
    redacted: bool = True


class SeqRecord(Record, kw_only=True):
    # Zero until the writer numbers and stamps the record (never 0 on disk).
    seq: int = 0
    t: float = 0.0


class Msg(SeqRecord, tag="msg", kw_only=True):
    """One JSON-RPC message (or what claimed to be one) exactly as sent.

    ``partial`` marks a last stdio line that ended at EOF without its ``\\n``,
    so that the wire can be reproduced to the byte.
    """

    dir: Direction
    ch: str
    raw: str | None = None
    raw_b64: str | None = None
    partial: bool = False


class Http(SeqRecord, tag="http", kw_only=True):
    x: str
    phase: Literal["request", "response", "end"]
    method: str | None = None
    path: str | None = None
    status: int | None = None
    headers: list[tuple[str, str]] | None = None
    reason: str | None = None
    body: str | None = None
    body_b64: str | None = None
    truncated: bool = False


class Stderr(SeqRecord, tag="stderr", kw_only=True):
    """A line the server wrote to its stderr (``raw_b64`` when not UTF-8)."""

    raw: str | None = None
    raw_b64: str | None = None
    partial: bool = False


class Event(SeqRecord, tag="event", kw_only=True):
    event: str
    pid: int | None = None
    code: int | None = None
    signal: int | None = None
    addr: str | None = None
    message: str | None = None


class Violation(SeqRecord, tag="violation", kw_only=True):
    rule: str
    severity: str
    msgs: list[int]
    message: str
    spec: str


AnyRecord = Header | Msg | Http | Stderr | Event | Violation

KNOWN_KINDS = frozenset({"header", "msg", "http", "stderr", "event", "violation"})


def text_fields(data: bytes) -> tuple[str | None, str | None]:
    """Split wire bytes into the (``raw``, ``raw_b64``) pair a record stores."""
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError:
        return None, base64.b64encode(data).decode("ascii")


def wire_bytes(record: Msg | Stderr) -> bytes:
    """The exact bytes of a ``msg`` or ``stderr`` record, without the line end.

    A record with neither field (or undecodable Base64) yields ``b""``: readers
    never raise on what they find in a file.
    """
    if record.raw is not None:
        return record.raw.encode("utf-8", "surrogatepass")
    if record.raw_b64 is not None:
        try:
            return base64.b64decode(record.raw_b64, validate=True)
        except (binascii.Error, ValueError):
            return b""
    return b""
