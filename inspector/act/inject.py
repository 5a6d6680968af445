"""Messages mcpeek sends on its own (injection), and the answers it keeps for itself.

A person injects a notification (``notifications/tools/list_changed``, a
``notifications/cancelled``, a progress) or a request (``ping``,
``tools/list``…) to either peer through the control channel. A request gets
an id of mcpeek's own (``"mcpeek-1"``, ``"mcpeek-2"``…, which no SDK
generates), whatever id it was written with; its answer is consumed by mcpeek:
recorded, never forwarded to the peer that did not ask.

``deliver`` is how a relay sends a line to a peer and records it: the stdio
relay writes it on the pipe, the HTTP relay POSTs it to the server or splices
it into an SSE stream the client has open (it raises ``HoldError`` when none
is).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from mcpeek.inspector.act.hold import HoldError, valid_json
from mcpeek.inspector.records import Act, Direction, text_fields

#: ``deliver(direction, line, act)``: write ``line`` towards the peer of
#: ``direction`` (``c2s``: the server) and record it after ``act``.
Deliver = Callable[[Direction, bytes, Act], None]
TARGETS: dict[str, Direction] = {"server": "c2s", "client": "s2c"}
ID_PREFIX = "mcpeek-"


class Injector:
    """Sends what a person injects; remembers the ids of its requests."""

    def __init__(self) -> None:
        self.deliver: Deliver | None = None  # set by a relay that can inject
        self._issued = 0  # ids given to requests that went out
        self.pending: dict[tuple[Direction, str], str] = {}  # (answer dir, id) -> method

    def inject(self, to: str, raw: Any) -> str | None:
        """Send ``raw`` to ``to`` (``client`` or ``server``); the id given to a request."""
        if self.deliver is None:
            raise HoldError("this proxy cannot inject")
        direction = TARGETS.get(to)
        if direction is None:
            raise HoldError(f"inject to {to!r}: expected client or server")
        message = json.loads(valid_json(raw, "the injected message"))
        if not isinstance(message, dict) or not isinstance(message.get("method"), str):
            raise HoldError("an injected message is a request or a notification (with a method)")
        given: str | None = None
        if "id" in message:  # a request: mcpeek's own id, and its answer is mcpeek's
            given = f"{ID_PREFIX}{self._issued + 1}"
            message["id"] = given
            answer_direction: Direction = "s2c" if direction == "c2s" else "c2s"
            self.pending[(answer_direction, given)] = message["method"]
        line = json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
        raw_text, raw_b64 = text_fields(line)
        act = Act(action="inject", dir=direction, ch="stdio", by="control", rule=None)
        act.raw, act.raw_b64 = raw_text, raw_b64
        try:
            self.deliver(direction, line, act)
        except HoldError:  # nothing carried it: no answer will come, its id is free
            if given is not None:
                del self.pending[(answer_direction, given)]
            raise
        if given is not None:
            self._issued += 1
        return given

    def consumes(self, direction: Direction, kind: str, message_id: Any) -> str | None:
        """The method of mcpeek's request that this message answers (it is mcpeek's to
        keep), or ``None``."""
        if kind not in ("result", "error") or not isinstance(message_id, str):
            return None
        return self.pending.pop((direction, message_id), None)
