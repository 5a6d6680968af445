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
import itertools
import time
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
    # Which redaction ran (None: none); see mcpeek.inspector.capture.redact.
    redaction: Redaction | None = None


class Redaction(msgspec.Struct, omit_defaults=True):
    """What a capture header says about the redaction that ran: the ``kinds``
    of secrets replaced, and the ``detector`` (and its version) that found the
    recognisable ones."""

    kinds: list[str]
    detector: str | None = None


class SeqRecord(Record, kw_only=True):
    # Zero until the writer numbers and stamps the record (never 0 on disk).
    seq: int = 0
    t: float = 0.0


class Msg(SeqRecord, tag="msg", kw_only=True):
    """One JSON-RPC message (or what claimed to be one) exactly as sent.

    ``partial`` marks a last stdio line that ended at EOF without its ``\\n``,
    so that the wire can be reproduced to the byte.

    ``made`` (optional) marks bytes mcpeek wrote rather than the peer ``dir``
    names: ``edit`` (a peer's message, changed), ``reply`` (an answer in place
    of the other peer), ``corrupt`` (a fault's invalid JSON), ``inject`` (a
    message of mcpeek's own). The ``act`` record just before it holds what
    the peer had sent. No rule blames a peer for such a message.
    """

    dir: Direction
    ch: str
    raw: str | None = None
    raw_b64: str | None = None
    partial: bool = False
    made: str | None = None


class Http(SeqRecord, tag="http", kw_only=True):
    """One HTTP exchange event.

    A header value that is not valid UTF-8 follows the ``raw``/``raw_b64`` rule:
    its entry in ``headers`` holds the standard Base64 of the exact bytes, and
    ``headers_b64`` lists the (0-based) indices of such entries, so the order
    and the duplicates of the headers are kept. :func:`header_bytes` gives the
    exact values back either way.

    ``encoding`` (request and response records) is the body's content coding on
    the wire (its ``Content-Encoding``): the relay forwarded the bytes as they
    were, and recorded the messages and body of that side decoded.

    ``undecoded`` (a request record, or a response's end record) marks a body
    that does not decode from its ``encoding`` (corrupt or truncated gzip, say):
    it is stored as it crossed the wire, and the messages in it are unknown.

    ``by_proxy`` (response records) marks a response mcpeek sent itself (its
    guard's 403, a 400 or 413, a 502 when the upstream could not be reached,
    aiohttp's own 400): no server answered, so no rule judges a server by it.
    """

    x: str
    phase: Literal["request", "response", "end"]
    method: str | None = None
    path: str | None = None
    status: int | None = None
    headers: list[tuple[str, str]] | None = None
    headers_b64: list[int] | None = None
    reason: str | None = None
    body: str | None = None
    body_b64: str | None = None
    truncated: bool = False
    encoding: str | None = None
    undecoded: bool = False
    by_proxy: bool = False


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
    """A rule that fired; ``made`` (optional) when the offending message was mcpeek's
    (``msg.made``): the finding is shown, never blamed on a peer."""

    rule: str
    severity: str
    msgs: list[int]
    message: str
    spec: str
    made: str | None = None


class Act(SeqRecord, tag="act", kw_only=True):
    """What mcpeek did to a message on the user's request (faults, scripts).

    ``action`` is ``edit``, ``drop``, ``reply``, ``delay``, ``disconnect``,
    ``corrupt``, ``hold``, ``inject`` or ``consume``; ``dir`` and ``ch`` are
    those of the message acted on, and ``raw``/``raw_b64`` its bytes exactly as
    the peer sent them (the ``msg`` records hold what each peer received).
    ``by`` is ``fault``, ``script``, ``intercept`` or ``control``; ``rule`` the
    fault's text, the script's file or the intercept filter; ``ms`` the delay
    or how long the message was held.
    """

    action: str
    dir: Direction
    ch: str
    by: str
    rule: str | None = None
    raw: str | None = None
    raw_b64: str | None = None
    ms: float | None = None


AnyRecord = Header | Msg | Http | Stderr | Event | Violation | Act

KNOWN_KINDS = frozenset({"header", "msg", "http", "stderr", "event", "violation", "act"})


def clock() -> float:
    """Now, as a record's ``t``: Unix time in seconds, to the microsecond (cut,
    not rounded: ``round(time.time(), 6)`` cost five times as much, on every
    batch a relay records)."""
    return time.time_ns() // 1000 / 1_000_000


def text_fields(data: bytes | bytearray) -> tuple[str | None, str | None]:
    """Split wire bytes into the (``raw``, ``raw_b64``) pair a record stores."""
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError:
        return None, base64.b64encode(data).decode("ascii")


def str_bytes(text: str) -> bytes:
    """The bytes ``text`` was decoded from: UTF-8, with the bytes that were not
    UTF-8 held as lone surrogates (``surrogateescape``, as aiohttp and
    ``os.fsdecode`` decode them)."""
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a lone surrogate that stands for no byte
        return text.encode("utf-8", "surrogatepass")


def is_utf8(text: str) -> bool:
    """Whether ``text`` encodes as UTF-8 (no lone surrogates standing for odd bytes)."""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def store_header_bytes(record: Http) -> None:
    """Make ``record.headers`` storable: each value holding bytes that are not UTF-8
    (decoded with ``surrogateescape``) becomes the Base64 of those bytes, its index
    added to ``headers_b64``. JSON cannot hold such a value as text, and the
    record must not be lost for it.

    Header names are HTTP tokens (aiohttp refuses any other byte in one), so a
    name that is not UTF-8 can only come from code: it is kept readable,
    with its odd bytes as ``\\xNN`` escapes.
    """
    headers = record.headers
    # One test of all names and values at once, at C speed: all but always ASCII.
    if not headers or "".join(itertools.chain.from_iterable(headers)).isascii():
        return
    if all(is_utf8(name) and is_utf8(value) for name, value in headers):
        return
    encoded = set(record.headers_b64 or ())
    stored = []
    for i, (name, value) in enumerate(headers):
        text_name = name if is_utf8(name) else str_bytes(name).decode("utf-8", "backslashreplace")
        if is_utf8(value):
            stored.append((text_name, value))
        else:
            stored.append((text_name, base64.b64encode(str_bytes(value)).decode("ascii")))
            encoded.add(i)
    record.headers = stored
    record.headers_b64 = sorted(encoded)


def header_bytes(record: Http) -> list[tuple[str, bytes]]:
    """The headers of an ``http`` record with their values as the exact bytes.

    A value listed in ``headers_b64`` whose Base64 does not decode yields ``b""``.
    """
    encoded = set(record.headers_b64 or ())
    out = []
    for i, (name, value) in enumerate(record.headers or ()):
        if i in encoded:
            try:
                out.append((name, base64.b64decode(value, validate=True)))
            except (binascii.Error, ValueError):
                out.append((name, b""))
        else:
            out.append((name, str_bytes(value)))
    return out


def wire_bytes(record: Msg | Stderr | Act) -> bytes:
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


def wire_start(record: Msg | Stderr | Act, chars: int) -> bytes:
    """The start of :func:`wire_bytes`: the bytes of the record's first ``chars``
    characters of text (all its bytes when it has fewer, or is Base64). Decoded, it
    gives the same first characters as the whole, without encoding 16 MB to show
    a line of them."""
    raw = record.raw
    if raw is not None and len(raw) > chars:
        return raw[:chars].encode("utf-8", "surrogatepass")
    return wire_bytes(record)
