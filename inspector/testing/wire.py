"""Rebuild, from capture records, the exact byte streams that crossed the wire."""

from __future__ import annotations

from collections.abc import Iterable

from mcpeek.inspector.records import AnyRecord, Msg, Stderr, wire_bytes


def stream_bytes(records: Iterable[AnyRecord], direction: str) -> bytes:
    """The bytes of ``c2s``, ``s2c`` or ``stderr``, newline-framed as on the wire."""
    parts: list[bytes] = []
    for record in records:
        if direction == "stderr":
            if not isinstance(record, Stderr):
                continue
        elif not (isinstance(record, Msg) and record.dir == direction):
            continue
        parts.append(wire_bytes(record))
        if not record.partial:
            parts.append(b"\n")
    return b"".join(parts)
