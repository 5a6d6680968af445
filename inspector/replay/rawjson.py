"""Edit one member of a JSON text in place, leaving every other byte as it was.

A mock server answers with the *recorded* bytes (bytes are the truth), but
some members must be those of the live conversation: the response ``id``,
the ``progressToken`` of progress notifications, the subscription id of a
``subscriptions/listen`` stream. :func:`replace_member` finds the member a
path of object keys names (``("params", "progressToken")``) with a small
scanner that skips strings and nested values without decoding them, and
splices new bytes in its place. :func:`member_bytes` returns a member's
exact text (e.g. the live request's ``id`` as the client wrote it, so ``1``,
``1.0`` and ``"1"`` stay what they were).
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

_SPACE = b" \t\r\n"
_SCALAR_END = b",}] \t\r\n"


class _Bad(Exception):
    pass


def _skip_space(data: bytes, i: int) -> int:
    n = len(data)
    while i < n and data[i] in _SPACE:
        i += 1
    return i


def _end_of_string(data: bytes, i: int) -> int:
    """``data[i]`` is the opening quote; the index just past the closing one."""
    i += 1
    n = len(data)
    while i < n:
        c = data[i]
        if c == 0x5C:  # backslash
            i += 2
            continue
        if c == 0x22:
            return i + 1
        i += 1
    raise _Bad


def _end_of_value(data: bytes, i: int) -> int:
    n = len(data)
    if i >= n:
        raise _Bad
    c = data[i]
    if c == 0x22:
        return _end_of_string(data, i)
    if c in b"{[":
        depth = 0
        while i < n:
            c = data[i]
            if c == 0x22:
                i = _end_of_string(data, i)
                continue
            if c in b"{[":
                depth += 1
            elif c in b"}]":
                depth -= 1
                if depth == 0:
                    return i + 1
            i += 1
        raise _Bad
    while i < n and data[i] not in _SCALAR_END:
        i += 1
    return i


def _member(data: bytes, start: int, key: str) -> tuple[int, int] | None:
    """The span of the value of ``key`` in the object starting at ``start``."""
    i = _skip_space(data, start)
    if i >= len(data) or data[i] != 0x7B:
        return None
    i = _skip_space(data, i + 1)
    found: tuple[int, int] | None = None
    while i < len(data) and data[i] != 0x7D:
        if data[i] != 0x22:
            raise _Bad
        key_end = _end_of_string(data, i)
        name = msgspec.json.decode(data[i:key_end])
        i = _skip_space(data, key_end)
        if i >= len(data) or data[i] != 0x3A:
            raise _Bad
        value_start = _skip_space(data, i + 1)
        value_end = _end_of_value(data, value_start)
        if name == key:
            found = (value_start, value_end)  # the last duplicate wins, as decoders do
        i = _skip_space(data, value_end)
        if i < len(data) and data[i] == 0x2C:
            i = _skip_space(data, i + 1)
    return found


def member_span(data: bytes, path: Sequence[str]) -> tuple[int, int] | None:
    """Where the value at ``path`` (object keys) is in ``data``; ``None`` if absent."""
    span = (0, len(data))
    try:
        for key in path:
            found = _member(data, span[0], key)
            if found is None:
                return None
            span = found
    except (_Bad, msgspec.DecodeError):
        return None
    return span


def member_bytes(data: bytes, path: Sequence[str]) -> bytes | None:
    span = member_span(data, path)
    return None if span is None else data[span[0] : span[1]]


def replace_member(data: bytes, path: Sequence[str], value: bytes) -> bytes | None:
    """``data`` with the value at ``path`` replaced by ``value``; ``None`` if absent."""
    span = member_span(data, path)
    if span is None:
        return None
    return data[: span[0]] + value + data[span[1] :]
