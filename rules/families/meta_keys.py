"""``_meta`` key names (both eras, since 2025-06-18): the prefix/name format.

A key is an optional prefix (dot-separated labels, then ``/``) and a name;
``_meta`` objects inside free-form members (tool arguments, schemas, log
data, capability settings) are not MCP's and are not judged.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from mcpeek.rules.base import MODERN_SPEC, Findings, Rule
from mcpeek.rules.context import MessageContext

BASIC = f"{MODERN_SPEC}/basic/index"
KEY_FORMAT_SINCE = "2025-06-18"  # the first revision with _meta key-name rules


# -- _meta key names (both eras) ----------------------------------------------------------
_LABEL = r"[A-Za-z](?:[A-Za-z0-9-]*[A-Za-z0-9])?"


_LABEL_RE = re.compile(_LABEL)


_NAME_RE = re.compile(r"(?:[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)?")


_KEY_RE = re.compile(
    rf"(?:{_LABEL}(?:\.{_LABEL})*/)?(?:[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)?"
)


#: Members whose values are free-form JSON (tool arguments, schemas, log data,
#: capability settings): a ``_meta`` inside them is not MCP's.
FREE_FORM = frozenset(
    {
        "arguments",
        "structuredContent",
        "inputSchema",
        "outputSchema",
        "requestedSchema",
        "data",
        "input",
        "metadata",
        "capabilities",
        "experimental",
        "extensions",
    }
)


MAX_DEPTH = 48


MAX_BAD = 5


Path = tuple[Any, ...] | None  # (parent path, member) links, rendered only on a hit


@functools.lru_cache(maxsize=4096)  # the same few keys come in every message
def key_problem(key: str) -> str | None:
    """Why ``key`` is not a valid ``_meta`` key name (``None``: it is)."""
    if _KEY_RE.fullmatch(key):
        return None
    prefix, slash, name = key.rpartition("/")
    if slash:
        if "/" in prefix:
            return "more than one '/'"
        for label in prefix.split("."):
            if not _LABEL_RE.fullmatch(label):
                return (
                    f"prefix label {label!r} must start with a letter, end with a letter or "
                    "digit, and hold only letters, digits and '-'"
                )
    if not _NAME_RE.fullmatch(name):
        return "name must start and end with a letter or digit, with only [A-Za-z0-9._-] inside"
    return "not a valid key"  # pragma: no cover - the cases above are exhaustive


def _render(path: Path) -> str:
    parts: list[str] = []
    while path is not None:
        path, member = path
        parts.append(f"[{member}]" if isinstance(member, int) else f".{member}")
    text = "".join(reversed(parts))
    return text[1:] if text.startswith(".") else text


def _bad_keys(value: Any, path: Path, out: list[tuple[str, str, str]], depth: int) -> None:
    if depth > MAX_DEPTH or len(out) > MAX_BAD:
        return
    if isinstance(value, dict):
        for member, item in value.items():
            if member == "_meta":
                if isinstance(item, dict):
                    for key in item:
                        if not isinstance(key, str):
                            continue
                        problem = key_problem(key)
                        if problem is not None:
                            out.append((_render((path, "_meta")), key, problem))
            elif member not in FREE_FORM and isinstance(item, dict | list):
                _bad_keys(item, (path, member), out, depth + 1)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            if isinstance(item, dict | list):
                _bad_keys(item, (path, index), out, depth + 1)


class KeyFormat(Rule):
    id = "meta.key-format"
    gated = frozenset({"request", "notification", "result"})
    severity = "error"
    summary = "a `_meta` key that breaks the prefix/name rules"
    spec = f"{BASIC}#meta"
    kinds = frozenset({"request", "notification", "result"})

    def on_message(self, ctx: MessageContext) -> Findings:
        if ctx.version is not None and ctx.version < KEY_FORMAT_SINCE:
            return None  # 2024-11-05 and 2025-03-26 had no key-name rules
        text = ctx.entry.record.raw
        occurrences = text.count('"_meta"') if text is not None else -1
        if occurrences == 0:
            return None  # spares the decode (a JSON escape in a key is not worth it)
        if ctx.kind == "result":
            body, root = ctx.result, "result"
        else:
            body, root = ctx.params, "params"
        if not isinstance(body, dict):
            return None
        bad: list[tuple[str, str, str]] = []
        top = body.get("_meta")
        if occurrences == 1 and isinstance(top, dict):
            # The usual message: one _meta, at the top; no need to walk the payload.
            _bad_keys({"_meta": top}, (None, root), bad, 0)
        else:
            _bad_keys(body, (None, root), bad, 0)
        if not bad:
            return None
        where, key, problem = bad[0]
        more = f" (and {len(bad) - 1} more)" if len(bad) > 1 else ""
        return [ctx.finding(f"_meta key {key!r} at {where}: {problem}{more}")]
