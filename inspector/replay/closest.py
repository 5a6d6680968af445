"""Why a live request matched nothing: the closest recorded request and how it differs.

When the mock server has no recorded answer for a request, the client's
author wants to know what the capture *does* hold. :func:`explain_miss`
compares the live request with every recorded one of the same method, the
way matching sees them (volatile ``_meta`` and ``--ignore`` pointers
removed), and names the closest and its first differences as JSON Pointers::

    no recorded tools/call matches; closest: tools/call {name: add, arguments:
    {a: 2, b: 3}} — differs at /params/arguments/a: recorded 2, got 7
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import msgspec

from mcpeek.inspector.replay.canonical import Pointer, strip_volatile_meta, without

ABSENT: Any = msgspec.UNSET
SHOWN_DIFFERENCES = 3
BRIEF_LIMIT = 120
_BARE = re.compile(r"^[A-Za-z_][A-Za-z0-9_./:@-]*$")


class Difference(msgspec.Struct):
    pointer: str
    recorded: Any = ABSENT
    got: Any = ABSENT


def comparable(method: str | None, params: Any, ignore: Sequence[Pointer]) -> Any:
    """What matching compares: method and params, minus what it ignores."""
    if isinstance(params, dict) and "inputResponses" in params:
        params = {k: v for k, v in params.items() if k != "inputResponses"}
    return without({"method": method, "params": strip_volatile_meta(params)}, ignore)


def differences(recorded: Any, got: Any, pointer: str = "") -> list[Difference]:
    if isinstance(recorded, dict) and isinstance(got, dict):
        out: list[Difference] = []
        for key in list(recorded) + [k for k in got if k not in recorded]:
            child = f"{pointer}/{_escape(str(key))}"
            out += differences(recorded.get(key, ABSENT), got.get(key, ABSENT), child)
        return out
    if isinstance(recorded, list) and isinstance(got, list):
        out = []
        for i in range(max(len(recorded), len(got))):
            r = recorded[i] if i < len(recorded) else ABSENT
            g = got[i] if i < len(got) else ABSENT
            out += differences(r, g, f"{pointer}/{i}")
        return out
    if type(recorded) is type(got) and recorded == got:
        return []
    return [Difference(pointer or "/", recorded, got)]


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def brief(value: Any, limit: int = BRIEF_LIMIT) -> str:
    """A short, readable rendering: ``{name: add, arguments: {a: 2}}``."""
    text = _render(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _render(value: Any) -> str:
    if value is ABSENT:
        return "(absent)"
    if isinstance(value, dict):
        inner = ", ".join(f"{_key(k)}: {_render(v)}" for k, v in value.items())
        return "{" + inner + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_render(v) for v in value) + "]"
    if isinstance(value, str) and _BARE.match(value) and value not in ("true", "false", "null"):
        return value
    try:
        return msgspec.json.encode(value).decode()
    except (TypeError, ValueError, OverflowError):
        return repr(value)


def _key(key: Any) -> str:
    return key if isinstance(key, str) and _BARE.match(key) else _render(str(key))


def shown_params(params: Any) -> Any:
    """Params as shown to a person: without ``_meta`` and MRTR answers."""
    if isinstance(params, dict):
        return {k: v for k, v in params.items() if k not in ("_meta", "inputResponses")}
    return {} if params is None else params


def explain_miss(
    method: str,
    params: Any,
    recorded: Sequence[Any],
    ignore: Sequence[Pointer] = (),
) -> tuple[str, dict[str, Any]]:
    """A message and the error's ``data`` for a request no recorded one matches.

    ``recorded`` holds the params of the recorded requests of ``method``.
    """
    got = comparable(method, params, ignore)
    best: tuple[int, Any, list[Difference]] | None = None
    for candidate in recorded:
        found = differences(comparable(method, candidate, ignore), got)
        if best is None or len(found) < best[0]:
            best = (len(found), candidate, found)
    if best is None:
        return f"no recorded {method} request", {"method": method}
    _, candidate, found = best
    head = f"no recorded {method} matches; closest: {method} {brief(shown_params(candidate))}"
    if not found:
        return head, {"method": method, "closest": shown_params(candidate)}
    parts = [
        f"{d.pointer}: recorded {brief(d.recorded, 60)}, got {brief(d.got, 60)}"
        for d in found[:SHOWN_DIFFERENCES]
    ]
    more = len(found) - SHOWN_DIFFERENCES
    tail = f" (and {more} more)" if more > 0 else ""
    data = {
        "method": method,
        "closest": shown_params(candidate),
        "differences": [
            {
                "pointer": d.pointer,
                **({"recorded": d.recorded} if d.recorded is not ABSENT else {}),
                **({"got": d.got} if d.got is not ABSENT else {}),
            }
            for d in found
        ],
    }
    return f"{head} — differs at {'; '.join(parts)}{tail}", data
