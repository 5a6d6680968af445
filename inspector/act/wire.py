"""The bytes mcpeek writes when it acts: answers in place and corrupted messages.

An answer keeps the request's ``id`` exactly as the sender wrote it (``1``,
``1.0`` and ``"1"`` stay what they were), spliced in from the request's bytes.
"""

from __future__ import annotations

import json
from typing import Any

from mcpeek.inspector.replay.rawjson import member_bytes

CORRUPTION = b" <corrupted by mcpeek"


def member_answer(request: bytes, members: dict[str, Any]) -> bytes:
    """A JSON-RPC response to ``request`` made of ``members`` (its result or error)."""
    rid = member_bytes(request, ("id",)) or b"null"
    body = json.dumps(members, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    rest = b"," + body[1:] if len(body) > 2 else b"}"
    return b'{"jsonrpc":"2.0","id":' + rid + rest


def error_answer(request: bytes, code: int, message: str) -> bytes:
    return member_answer(request, {"error": {"code": code, "message": message}})


def corrupt(raw: bytes) -> bytes:
    """Invalid JSON that still starts like the message: its first half, cut mid-way."""
    return raw[: max(1, len(raw) // 2)].replace(b"\n", b" ") + CORRUPTION
