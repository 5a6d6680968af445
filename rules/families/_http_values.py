"""Value Encoding: how a client mirrors a body value into an MCP request header.

A modern client repeats parts of a request's body in headers (``Mcp-Name``,
``Mcp-Param-*``) so that a proxy can route without parsing JSON. A value that
cannot travel as a plain header value (surrounding whitespace, a character
outside printable ASCII, or one that looks like the sentinel itself) is sent
Base64-encoded as ``=?base64?…?=``. :func:`header_mismatch` tells why a
header does not carry the body's value; :func:`header_text` gives the header
form of a tool argument and :func:`argument` finds one by its property chain.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from mcpeek.rules.families._messages import shown

SENTINEL_PREFIX, SENTINEL_SUFFIX = "=?base64?", "?="
ABSENT = object()  # an argument that is not there (or null)


def needs_encoding(value: str) -> bool:
    """A value that cannot travel as a plain header value (Value Encoding)."""
    if value != value.strip(" \t"):
        return True
    if value.startswith(SENTINEL_PREFIX) and value.endswith(SENTINEL_SUFFIX):
        return True
    if value.isascii() and value.isprintable():
        return False  # (" " to "~" only: known at C speed, the usual name or argument)
    return any(not (" " <= c <= "~" or c == "\t") for c in value)


def decode_header(value: str) -> tuple[str | None, bool]:
    """(decoded value or ``None`` if the Base64 is bad, whether it was sentinel-encoded)."""
    if (
        len(value) >= len(SENTINEL_PREFIX) + len(SENTINEL_SUFFIX)
        and value.startswith(SENTINEL_PREFIX)
        and value.endswith(SENTINEL_SUFFIX)
    ):
        payload = value[len(SENTINEL_PREFIX) : -len(SENTINEL_SUFFIX)]
        try:
            return base64.b64decode(payload, validate=True).decode("utf-8"), True
        except (binascii.Error, ValueError):
            return None, True
    return value, False


def header_mismatch(header: str, expected: str, *, number: float | None = None) -> str | None:
    """Why a mirrored header does not carry ``expected`` (``None`` when it does)."""
    decoded, encoded = decode_header(header)
    if decoded is None:
        return f"{shown(header, 80)} is not valid Base64 in the =?base64?…?= form"
    if decoded != expected:
        if number is not None and _number(decoded) == number:
            return None  # integers compare numerically (42 and 42.0)
        verb = "decodes to" if encoded else "is"
        return f"{verb} {shown(decoded, 80)}, the body has {shown(expected, 80)}"
    if not encoded and needs_encoding(expected):
        return f"carries {shown(expected, 80)} unencoded (it MUST use the =?base64?…?= form)"
    return None


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def argument(arguments: Any, chain: tuple[str, ...]) -> Any:
    """The argument at ``chain`` (property names), or :data:`ABSENT` when absent or null."""
    value = arguments
    for step in chain:
        if not isinstance(value, dict) or step not in value:
            return ABSENT
        value = value[step]
    return ABSENT if value is None else value


def header_text(value: Any) -> tuple[str, float | None] | None:
    """The header form of an argument (Value Encoding), and its number for integers."""
    if isinstance(value, bool):
        return ("true" if value else "false"), None
    if isinstance(value, int):
        return str(value), float(value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value)), value
    if isinstance(value, str):
        return value, None
    return None  # not a primitive: the arguments are wrong, not the header
