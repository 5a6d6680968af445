"""Recorded client messages made live: new JSON-RPC ids, and what must follow them.

The replay driver sends each recorded request with an id of its own
(:class:`IdAllocator`); a cancellation then names the live id of the request
it cancels, and a multi round-trip retry carries the ``requestState`` the
*live* server issued, not the recorded one. Pure functions on copies: the
plan's messages are never changed.
"""

from __future__ import annotations

import copy
from typing import Any

import msgspec

UNSET: Any = msgspec.UNSET  # the live server issued no requestState


class IdAllocator:
    """New JSON-RPC ids for the live session: 1, 2, 3 … never reused, and the
    mapping from recorded ids to live ones (the latest request with that id wins)."""

    def __init__(self, start: int = 1) -> None:
        self._next = start
        self._live: dict[str, int] = {}

    def allocate(self, recorded_id: Any) -> int:
        live = self._next
        self._next += 1
        self._live[_id_key(recorded_id)] = live
        return live

    def live_id(self, recorded_id: Any) -> int | None:
        return self._live.get(_id_key(recorded_id))


def _id_key(value: Any) -> str:
    # 1 and "1" are different ids: the key keeps the type.
    return f"{type(value).__name__}:{value!r}"


def with_id(message: dict[str, Any], live_id: Any) -> dict[str, Any]:
    """A copy of a recorded request with its live id."""
    out = copy.deepcopy(message)
    out["id"] = live_id
    return out


def retry_message(message: dict[str, Any], live_id: Any, issued_state: Any) -> dict[str, Any]:
    """A recorded MRTR retry, to send after the live server's ``input_required``:
    its live id, and the ``requestState`` the live server issued (none when it
    issued none: a client must not invent one). ``inputResponses`` stay as recorded."""
    out = with_id(message, live_id)
    params = out.get("params")
    if isinstance(params, dict):
        if issued_state is UNSET:
            params.pop("requestState", None)
        else:
            params["requestState"] = issued_state
    return out


def remap_cancel(message: dict[str, Any], ids: IdAllocator) -> dict[str, Any]:
    """A recorded ``notifications/cancelled`` naming the live id of its request."""
    out = copy.deepcopy(message)
    params = out.get("params")
    if isinstance(params, dict) and "requestId" in params:
        live = ids.live_id(params["requestId"])
        if live is not None:
            params["requestId"] = live
    return out
