"""Compare a live response with the recorded one: a list of JSON-path differences.

Two runs of the same conversation legitimately differ in a few places, so
both messages are *normalised* before they are compared (:func:`normalize`):

- the JSON-RPC ``id`` is dropped (replay renumbers every request);
- every ``_meta`` object, at any depth, loses its volatile members
  (:data:`~mcpeek.inspector.replay.canonical.VOLATILE_META`: progress tokens, client
  and server info, trace context) and anything that looks like a timestamp
  (a key naming a time or date, or an ISO 8601 date-time value); an ``_meta``
  left empty disappears;
- the ``requestState`` of an ``input_required`` result is opaque server state
  that a server may seal afresh on every run: only its presence is compared.

:func:`diff` then walks both values side by side and returns one
:class:`Difference` per JSON Pointer where they part: a changed scalar, a
member or list item present on one side only (:data:`MISSING` on the other),
or a change of type. Lists are compared item by item (index ``i`` with index
``i``). The user's ``--ignore`` JSON Pointers (relative to the whole response
message, e.g. ``/result/content/0/text``) are skipped during that walk, with
everything below them, whether the member or item exists on both sides, one
or none. Everything here is pure: no I/O, nothing is modified in place.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from mcpeek.inspector.replay.canonical import (
    VOLATILE_META,
    Pointer,
    canonical,
    strip_volatile_meta,
)

OPAQUE_STATE: Final = "<opaque requestState>"
_TIME_WORDS = frozenset({"time", "timestamp", "date", "datetime", "at", "expires", "expiry"})
_WORD = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
_ISO_DATETIME = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}")


class _Missing:
    """The side of a difference where the member or item does not exist (one
    instance, :data:`MISSING`, compared by identity)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "(absent)"


MISSING: Final = _Missing()


@dataclass(frozen=True)
class Difference:
    """Where the recorded and the live value part; ``attempt`` is the MRTR attempt
    (1 for a plain request)."""

    path: str
    recorded: Any
    live: Any
    attempt: int = 1

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.path, "attempt": self.attempt}
        if self.recorded is not MISSING:
            out["recorded"] = self.recorded
        if self.live is not MISSING:
            out["live"] = self.live
        return out


def is_timestamp(key: str, value: Any) -> bool:
    """A ``_meta`` member that records *when*, which no two runs share."""
    local = key.rsplit("/", 1)[-1]
    if any(word.lower() in _TIME_WORDS for word in _WORD.findall(local)):
        return True
    return isinstance(value, str) and bool(_ISO_DATETIME.match(value))


def _strip_meta(value: Any) -> Any:
    """``value`` with every ``_meta`` (at any depth) cleared of volatile members."""
    if isinstance(value, list):
        return [_strip_meta(item) for item in value]
    if not isinstance(value, dict):
        return value
    out = {k: (_strip_meta(v) if k != "_meta" else v) for k, v in value.items()}
    if isinstance(out.get("_meta"), dict):
        meta = {
            k: _strip_meta(v)
            for k, v in out["_meta"].items()
            if k not in VOLATILE_META and not is_timestamp(k, v)
        }
        out["_meta"] = meta
        if not meta:
            del out["_meta"]
        return out
    return strip_volatile_meta(out)


def normalize(message: Any) -> Any:
    """A response message as it is compared (see the module docstring; the
    ``--ignore`` pointers are :func:`diff`'s)."""
    if not isinstance(message, dict):
        return message
    body = {k: v for k, v in message.items() if k != "id"}
    body = _strip_meta(body)
    result = body.get("result")
    if (
        isinstance(result, dict)
        and result.get("resultType") == "input_required"
        and "requestState" in result
    ):
        body["result"] = {**result, "requestState": OPAQUE_STATE}
    return body


def escape(token: str) -> str:
    """One JSON Pointer reference token (RFC 6901: ``~`` → ``~0``, ``/`` → ``~1``)."""
    return token.replace("~", "~0").replace("/", "~1")


def diff(
    recorded: Any,
    live: Any,
    path: str = "",
    attempt: int = 1,
    ignore: Sequence[Pointer] = (),
) -> list[Difference]:
    """Every JSON Pointer under ``path`` where ``recorded`` and ``live`` differ, but
    the ``ignore`` pointers (relative to ``recorded`` and ``live``) and what is below
    them."""
    out: list[Difference] = []
    _walk(recorded, live, _Walk(path, (), attempt, frozenset(ignore), out))
    return out


@dataclass(frozen=True)
class _Walk:
    path: str  # the JSON Pointer shown (escaped)
    tokens: Pointer  # the same from the root, unescaped: what ignore pointers match
    attempt: int
    ignore: frozenset[Pointer]
    out: list[Difference]

    def child(self, token: str) -> _Walk:
        return _Walk(
            f"{self.path}/{escape(token)}",
            (*self.tokens, token),
            self.attempt,
            self.ignore,
            self.out,
        )


def _walk(recorded: Any, live: Any, at: _Walk) -> None:
    if at.tokens in at.ignore:
        return
    if isinstance(recorded, dict) and isinstance(live, dict):
        keys = list(recorded) + [k for k in live if k not in recorded]
        for key in keys:
            _walk(recorded.get(key, MISSING), live.get(key, MISSING), at.child(str(key)))
        return
    if isinstance(recorded, list) and isinstance(live, list):
        for index in range(max(len(recorded), len(live))):
            _walk(
                recorded[index] if index < len(recorded) else MISSING,
                live[index] if index < len(live) else MISSING,
                at.child(str(index)),
            )
        return
    if recorded is MISSING or live is MISSING or canonical(recorded) != canonical(live):
        at.out.append(Difference(at.path, recorded, live, at.attempt))


def compare_responses(
    recorded: Any, live: Any, ignore: Sequence[Pointer] = (), attempt: int = 1
) -> list[Difference]:
    """The differences between two response messages, once both are normalised."""
    return diff(normalize(recorded), normalize(live), "", attempt, ignore)


def compare_requests(
    recorded: Any, live: Any, ignore: Sequence[Pointer] = (), attempt: int = 1
) -> list[Difference]:
    """The same for two (server-initiated) requests: ``method`` and ``params``."""
    return compare_responses(recorded, live, ignore, attempt)
