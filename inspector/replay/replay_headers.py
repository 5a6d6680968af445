"""Which HTTP headers a replayed message is sent with.

A step recorded over HTTP is sent again with the headers its POST was
recorded with, minus the hop-by-hop and transport ones and the values the
capture redacted (:func:`replayed_headers`); a step recorded over stdio gets
the headers a client would send with it (:func:`synthesized_headers`). A
header aiohttp would refuse (:func:`header_problem`) is left out by the
transport, and refused up front when the user gives it (``--header``).
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterable
from typing import Any

from mcpeek.inspector.proxy.http_wire import HEADER_CONTROL

NOT_REPLAYED = frozenset(
    {
        "host", "content-length", "connection", "keep-alive", "transfer-encoding", "te",
        "upgrade", "proxy-connection", "accept-encoding", "accept", "content-type",
        "user-agent", "mcp-session-id", "last-event-id", "cookie", "origin",
    }
)  # fmt: skip
REDACTED = "<redacted sha256:"
TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")  # RFC 9110 field-name


def header_name_value(name: str) -> str:
    """``Mcp-Name`` encoding: plain ASCII as is, anything else as the Base64 sentinel."""
    if name.isascii() and name.isprintable() and name == name.strip():
        return name
    return f"=?base64?{base64.b64encode(name.encode()).decode()}?="


def header_problem(name: str, value: str) -> str | None:
    """Why the header ``name: value`` cannot be sent as is (None when it can): a name
    that is not an HTTP token, or a control character (CR, LF, NUL...) in the value."""
    if not TOKEN.fullmatch(name):
        return f"{name!r} is not a valid header name"
    bad = HEADER_CONTROL.search(value)
    if bad is not None:
        return f"the value of {name} holds the control character {bad.group()!r}"
    return None


def synthesized_headers(message: dict[str, Any], version: str | None) -> list[tuple[str, str]]:
    """What a client sends with a message that was recorded without headers (stdio)."""
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    modern = meta.get("io.modelcontextprotocol/protocolVersion") if isinstance(meta, dict) else None
    headers: list[tuple[str, str]] = []
    if isinstance(modern, str):
        version = modern
    if version:
        headers.append(("mcp-protocol-version", version))
    method = message.get("method")
    if isinstance(modern, str) and isinstance(method, str):
        headers.append(("mcp-method", method))
        key = "uri" if method == "resources/read" else "name"
        target = params.get(key) if isinstance(params, dict) else None
        if "id" in message and isinstance(target, str):
            headers.append(("mcp-name", header_name_value(target)))
    return headers


def replayed_headers(
    recorded: Iterable[tuple[str, str]],
) -> tuple[list[tuple[str, str]], list[str]]:
    """The recorded headers that are sent again, and the names of redacted ones dropped."""
    kept, redacted = [], []
    for name, value in recorded:
        lname = name.lower()
        if lname in NOT_REPLAYED:
            continue
        if value.startswith(REDACTED):
            redacted.append(lname)
            continue
        kept.append((lname, value))
    return kept, redacted
