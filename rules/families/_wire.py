"""Quoting values as they crossed the wire, and reading payloads without trusting them.

Shared by the lifecycle, versions, capabilities, deprecated and notification
families: :func:`shown` renders a JSON value exactly (ids, versions, tokens),
:func:`where` names a request (``tools/call (id 4)``), :func:`as_dict` reads a
member that should be an object.
"""

from __future__ import annotations

from typing import Any

import msgspec

from mcpeek.rules.context import MessageContext

MCP = "io.modelcontextprotocol/"
WINDOW = 4096  # bounded memories (HTTP exchanges, progress tokens…)


def shown(value: Any) -> str:
    """A JSON value as it appears on the wire (ids, versions)."""
    try:
        return msgspec.json.encode(value).decode()
    except (TypeError, msgspec.EncodeError):
        return repr(value)
    except RecursionError:
        return "(nested too deeply to show)"


def where(ctx: MessageContext) -> str:
    """``tools/call (id 4)`` for a request or its response."""
    method = ctx.method or "?"
    msg_id = ctx.entry.id
    if msg_id is msgspec.UNSET:
        return method
    return f"{method} (id {shown(msg_id)})"


def as_dict(value: Any) -> dict[str, Any] | None:
    return value if isinstance(value, dict) else None


def side(direction: str) -> str:
    return "client" if direction == "c2s" else "server"
