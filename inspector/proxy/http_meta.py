"""The 2026-07-28 request metadata of a POST: the ``Mcp-Method``/``Mcp-Name``
headers and the ``_meta`` envelope every request carries (for the POSTs mcpeek
sends a server on its own, see :mod:`~mcpeek.inspector.proxy.http_inject`)."""

from __future__ import annotations

import base64
from typing import Any

import msgspec

#: The 2026-07-28 methods whose ``Mcp-Name`` header mirrors a param.
NAMED_BY = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
BASE64_SENTINEL = "=?base64?"
#: The 2026-07-28 ``_meta`` keys a server requires on every request.
ENVELOPE = frozenset(
    f"io.modelcontextprotocol/{key}"
    for key in ("protocolVersion", "clientCapabilities", "clientInfo")
)


def header_value(text: str) -> str:
    """``text`` as a 2026-07-28 request metadata header value: as it is when it is
    plain visible ASCII, else ``=?base64?…?=`` of its UTF-8 (as is anything that
    would read as that sentinel)."""
    plain = all(" " <= c <= "~" or c == "\t" for c in text) and text == text.strip()
    if plain and not text.startswith(BASE64_SENTINEL):
        return text
    return f"{BASE64_SENTINEL}{base64.b64encode(text.encode('utf-8')).decode('ascii')}?="


def envelope(params: msgspec.Raw | None) -> dict[str, Any]:
    """The ``_meta`` keys of the 2026-07-28 envelope in a request's params."""
    try:
        meta = msgspec.json.decode(params).get("_meta") if params is not None else None
    except (msgspec.DecodeError, AttributeError):
        return {}
    if not isinstance(meta, dict):
        return {}
    return {k: v for k, v in meta.items() if k in ENVELOPE}


def param(params: msgspec.Raw | None, name: str | None) -> str | None:
    """The string param ``name`` of a request, if it has one."""
    if params is None or name is None:
        return None
    try:
        value = msgspec.json.decode(params).get(name)
    except (msgspec.DecodeError, AttributeError):
        return None
    return value if isinstance(value, str) else None
