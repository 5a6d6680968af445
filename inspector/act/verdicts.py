"""What a script or a fault decides about one message, and what a relay does with it.

Scripts see a :class:`Message` and answer ``None`` (pass it on unchanged) or
one of :class:`Edit`, :class:`Drop`, :class:`Reply`. The actor turns every
decision into an :class:`Outcome`, the one thing a relay carries out.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from mcpeek.inspector.records import Act, Direction

RESPONSE_KINDS = frozenset({"result", "error"})


class Message:
    """One complete JSON-RPC message, as a script sees it (read-only).

    ``raw`` is its bytes exactly as the peer sent them; ``json`` the decoded
    object (``None`` when it is not JSON); ``dir`` is ``c2s`` or ``s2c``;
    ``kind`` is ``request``, ``notification``, ``result``, ``error`` or
    ``invalid``; ``method`` is the method of a request or notification, or, for
    an answer, of the request it answers (when seen).
    """

    __slots__ = ("__dict__", "ch", "dir", "id", "kind", "method", "raw")

    def __init__(
        self, dir: Direction, ch: str, raw: bytes, kind: str, id: Any, method: str | None
    ) -> None:
        self.dir = dir
        self.ch = ch
        self.raw = raw
        self.kind = kind
        self.id = id
        self.method = method

    @cached_property
    def json(self) -> Any:
        try:
            return json.loads(self.raw)
        except ValueError:
            return None

    @property
    def is_request(self) -> bool:
        return self.kind == "request"

    @property
    def is_response(self) -> bool:
        return self.kind in RESPONSE_KINDS

    def __repr__(self) -> str:
        return f"<Message {self.dir} {self.kind} {self.method} id={self.id!r}>"


def as_bytes(message: Any) -> bytes:
    """A script's message: bytes and text as they are, anything else as compact JSON."""
    if isinstance(message, bytes):
        return message
    if isinstance(message, str):
        return message.encode("utf-8")
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


@dataclass(frozen=True)
class Edit:
    """Forward ``message`` (a dict, or JSON text or bytes) instead of the original."""

    message: Any


@dataclass(frozen=True)
class Drop:
    """Forward nothing: the addressee never sees the message."""


@dataclass(frozen=True)
class Reply:
    """Answer a request in place: the other peer never sees it.

    Give ``result`` or ``error`` (``{"code": ..., "message": ...}``); mcpeek
    adds ``jsonrpc`` and the request's ``id``.
    """

    result: Any = None
    error: Any = None


@dataclass
class Outcome:
    """What a relay does with one message.

    ``forward``: the bytes for the addressee (``None``: nothing goes on);
    ``answer``: bytes back to the sender in place of the addressee's answer;
    ``delay``: seconds to wait first; ``disconnect``: cut the connection to
    the client; ``made``: how ``forward`` came to differ from the peer's bytes
    (``edit``, ``corrupt``); ``act``: the record of what was done (``None``
    when the message passed untouched).
    """

    forward: bytes | None
    answer: bytes | None = None
    delay: float = 0.0
    disconnect: bool = False
    made: str | None = None
    act: Act | None = field(default=None)

    @property
    def untouched(self) -> bool:
        return self.act is None
