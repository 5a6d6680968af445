"""What a validation says: its :class:`Outcome` and the text of its errors.

An instance is judged by its first :data:`MAX_ERRORS` errors, each located by
a JSON path from the instance's root (``structuredContent.items[2].name``,
``arguments["odd key"]``) and cut to a readable length. A ``$ref`` the
validator refused to fetch is not an error of the instance: the outcome
names it in ``unresolved`` instead, so that the rule can say the instance
could not be judged.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec

from mcpeek.rules.families._messages import shown

MAX_ERRORS = 5  # validation errors reported per instance


class Outcome(msgspec.Struct):
    """The result of validating one instance."""

    errors: list[str]
    more: bool = False
    unresolved: str | None = None  # an external $ref that was refused


def unresolved_ref(exc: Exception) -> str:
    """The reference an ``Unresolvable`` error is about (or the error's text)."""
    ref = getattr(exc, "ref", None)
    wrapped = getattr(exc, "_wrapped", None)
    if ref is None and wrapped is not None:
        ref = getattr(wrapped, "ref", None)
    return str(ref) if ref is not None else str(exc)


_IDENT = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")


def json_path(root: str, path: Any) -> str:
    """Where an error is, from ``root`` (``root.a[0]["b c"]``)."""
    out = root
    for step in path:
        if isinstance(step, int):
            out += f"[{step}]"
        elif isinstance(step, str) and _IDENT.fullmatch(step):
            out += f".{step}"
        else:
            out += f"[{shown(step, 40)}]"
    return out


def error_text(root: str, error: Any) -> str:
    """One validation error: its JSON path and its message, cut to 200 characters."""
    message = str(getattr(error, "message", error))
    if len(message) > 200:
        message = message[:199] + "…"
    return f"{json_path(root, getattr(error, 'absolute_path', ()))}: {message}"


def describe(outcome: Outcome) -> str:
    """The errors of an outcome in one sentence."""
    text = "; ".join(outcome.errors)
    return text + (" (and more)" if outcome.more else "")
