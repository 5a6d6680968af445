"""Messages held for a person (``--intercept FILTER``), until released.

A held message waits on a future; a release says what becomes of it:
forward it unchanged, forward an edit, drop it, or answer a held request in
place. A release is checked before it is accepted: an edit or an answer that
is not valid JSON is refused with where it stops being JSON, and an answer
for anything but a request is refused; the message stays held.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from dataclasses import dataclass, field
from typing import Any, Literal

from mcpeek.inspector.act.wire import member_answer

ReleaseAction = Literal["forward", "edit", "drop", "answer"]
ACTIONS = ("forward", "edit", "drop", "answer")


@dataclass(frozen=True)
class Release:
    """What becomes of a held message; ``data`` is the edit, or the answer."""

    action: ReleaseAction
    data: bytes | None = None


@dataclass
class Held:
    number: int
    dir: str
    ch: str
    raw: bytes
    kind: str
    method: str | None
    since: float = field(default_factory=time.monotonic)
    future: asyncio.Future[Release] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )

    def describe(self) -> dict[str, Any]:
        return {
            "id": self.number,
            "dir": self.dir,
            "ch": self.ch,
            "kind": self.kind,
            "method": self.method,
            "held_s": round(time.monotonic() - self.since, 3),
            "raw": self.raw.decode("utf-8", "replace"),
        }


class HoldError(ValueError):
    """A release that is refused; ``str()`` says why (the message stays held)."""


class Holds:
    """The messages held now, by number (1, 2, 3… in the order they were held)."""

    def __init__(self) -> None:
        self._held: dict[int, Held] = {}
        self._numbers = itertools.count(1)

    def hold(self, direction: str, ch: str, raw: bytes, kind: str, method: str | None) -> Held:
        held = Held(next(self._numbers), direction, ch, raw, kind, method)
        self._held[held.number] = held
        return held

    def done(self, held: Held) -> None:
        self._held.pop(held.number, None)

    def listing(self) -> list[dict[str, Any]]:
        """The messages still held (a released one may not have gone on yet)."""
        return [held.describe() for held in self._held.values() if not held.future.done()]

    def __len__(self) -> int:
        return sum(not held.future.done() for held in self._held.values())

    def release(self, number: int, action: str, data: Any = None) -> None:
        """Release held message ``number``; raises :class:`HoldError` when refused."""
        held = self._held.get(number)
        if held is None or held.future.done():
            raise HoldError(f"no message #{number} is held")
        if action not in ACTIONS:
            raise HoldError(f"unknown release {action!r}; known: {' '.join(ACTIONS)}")
        payload: bytes | None = None
        if action == "edit":
            payload = valid_json(data, "the edit")
        elif action == "answer":
            if held.kind != "request":
                raise HoldError(f"message #{number} is a {held.kind}: only a request is answered")
            members = json.loads(valid_json(data, "the answer"))
            if not isinstance(members, dict) or ("result" in members) == ("error" in members):
                raise HoldError("the answer wants a JSON object with a result or an error")
            payload = member_answer(
                held.raw, {k: members[k] for k in ("result", "error") if k in members}
            )
        held.future.set_result(Release(action, payload))  # type: ignore[arg-type]


def valid_json(data: Any, what: str) -> bytes:
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    if not isinstance(text, str):
        raise HoldError(f"{what} wants the message's JSON text")
    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        raise HoldError(
            f"{what} is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from None
    return text.encode("utf-8")
