"""Canonical forms of JSON values, for matching and comparing recorded traffic.

A mock server (``mcpeek serve``) finds the recorded request that answers a
live one; ``mcpeek replay`` compares a live response with the recorded one.
Both must ignore what legitimately differs between two runs of the same
conversation: key order and whitespace, the JSON-RPC id, volatile ``_meta``
members (progress tokens, client info and capabilities, trace context), and
whatever the user names with JSON Pointers (RFC 6901), e.g.
``--ignore /params/arguments/timestamp``.

:func:`canonical` returns bytes that are equal exactly when two values are
equal after those removals, so they serve as dictionary keys.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import msgspec

# _meta members that differ from one run to the next without changing what was asked.
VOLATILE_META = frozenset(
    {
        "progressToken",
        "io.modelcontextprotocol/clientInfo",
        "io.modelcontextprotocol/clientCapabilities",
        "io.modelcontextprotocol/serverInfo",
        "traceparent",
        "tracestate",
        "baggage",
    }
)

Pointer = tuple[str, ...]

_encoder = msgspec.json.Encoder(order="sorted")


class PointerError(ValueError):
    """A JSON Pointer that does not follow RFC 6901."""


def parse_pointer(text: str) -> Pointer:
    """``/params/arguments/a~1b`` → ``("params", "arguments", "a/b")``."""
    if text == "":
        return ()
    if not text.startswith("/"):
        raise PointerError(f"JSON Pointer must start with '/': {text!r}")
    tokens = []
    for token in text[1:].split("/"):
        if "~" in token.replace("~0", "").replace("~1", ""):
            raise PointerError(f"bad escape in JSON Pointer {text!r} (only ~0 and ~1)")
        tokens.append(token.replace("~1", "/").replace("~0", "~"))
    return tuple(tokens)


def parse_pointers(texts: Iterable[str]) -> list[Pointer]:
    """Pointers to ignore: each must name a member (``""``, the whole message, would
    make every message equal to every other)."""
    pointers = [parse_pointer(text) for text in texts]
    if () in pointers:
        raise PointerError("'' names the whole message: nothing would be left to compare")
    return pointers


def without(value: Any, pointers: Sequence[Pointer]) -> Any:
    """A copy of ``value`` with the members the pointers name removed (absent ones ignored)."""
    if not pointers:
        return value
    if any(len(p) == 0 for p in pointers):
        return None
    copy = _copy(value)
    for pointer in pointers:
        _remove(copy, pointer)
    return copy


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


def _remove(value: Any, pointer: Pointer) -> None:
    *path, last = pointer
    for token in path:
        value = _child(value, token)
        if value is None:
            return
    if isinstance(value, dict):
        value.pop(last, None)
    elif isinstance(value, list) and last.isdigit() and int(last) < len(value):
        # Removing shifts later items; a replaced marker keeps positions comparable.
        value[int(last)] = None


def _child(value: Any, token: str) -> Any:
    if isinstance(value, dict):
        return value.get(token)
    if isinstance(value, list) and token.isdigit() and int(token) < len(value):
        return value[int(token)]
    return None


def strip_volatile_meta(value: Any) -> Any:
    """``value`` (params or a result) without the volatile ``_meta`` members.

    An ``_meta`` left empty is dropped, so a request with only volatile
    metadata matches one with none.
    """
    if not isinstance(value, dict) or "_meta" not in value:
        return value
    meta = value["_meta"]
    out = {k: v for k, v in value.items() if k != "_meta"}
    if isinstance(meta, dict):
        kept = {k: v for k, v in meta.items() if k not in VOLATILE_META}
        if kept:
            out["_meta"] = kept
    else:
        out["_meta"] = meta
    return out


def canonical(value: Any) -> bytes:
    """Sorted-key compact JSON: equal bytes exactly when the values are equal."""
    try:
        return _encoder.encode(value)
    except (TypeError, ValueError, OverflowError):  # not JSON data: compare by repr
        return repr(value).encode()


def request_key(method: str | None, params: Any, ignore: Sequence[Pointer] = ()) -> bytes:
    """The matching key of a request: method + params minus volatile members.

    ``ignore`` pointers are relative to the whole message (``/params/...``),
    the way users write them.
    """
    message = {"method": method, "params": strip_volatile_meta(params)}
    return canonical(without(message, ignore))
