"""How messages look, and the styles and cell texts a flow's row shares with the detail.

Pure functions from the data model to Rich objects, shared by the flow list
(:mod:`mcpeek.tui.rows`), the detail pane and the snapshot tests. Nothing here
keeps state.

Large bodies are capped (``max_lines``) and long strings folded
(``fold``) so a 20 MB tool result opens instantly; the detail pane's
"show all" action asks again without limits.
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple

import msgspec
from rich.style import Style
from rich.text import Text

SEVERITY_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}
STATUS_STYLE = {
    "complete": "green",
    "error": "red",
    "tool-error": "dark_orange",
    "cancelled": "magenta",
    "unanswered": "bold red",
    "pending": "yellow",
    "input_required": "bold yellow",
    "closed": "dim",
    "by-proxy": "bold magenta",  # mcpeek answered (e.g. 502, no upstream): not the server
    "undecoded": "magenta",  # answered in a body mcpeek could not decode (corrupt gzip)
    "orphan": "bold red",
    "notification": "blue",
}
SLOW_STYLE = "bold white on red"  # a request in flight past --slow: it must catch the eye
FOLD_AT = 200  # characters of a string shown before folding
MAX_LINES = 400  # lines of a pretty-printed body shown before capping
MAX_CHARS = 64 * 1024  # characters of a body that is not JSON (or too big) shown before capping
BIG_BODY = 1 << 20  # bytes: a bigger body is not pretty-printed until "show all"
LARGEST_SHOWN = 8 << 20  # bytes: "show all" stops here (copy or save the flow for the rest)


def ids_text(ids: list[Any]) -> str:
    return "→".join(str(i) if isinstance(i, int) else json.dumps(i) for i in ids)


def latency_text(ms: float | None) -> str:
    if ms is None:
        return ""
    if ms >= 10_000:
        return f"{ms / 1000:.1f} s"
    return f"{ms:.1f} ms" if ms < 100 else f"{ms:.0f} ms"


def elapsed_text(seconds: float) -> str:
    """How long a request has been in flight, in whole seconds (a running timer)."""
    whole = max(int(seconds), 0)
    if whole < 60:
        return f"{whole} s"
    return f"{whole // 60}m{whole % 60:02d}s"


def fold_strings(value: Any, fold: int | None) -> Any:
    """Long strings shortened to ``fold`` characters with a note of what was left out."""
    if fold is None:
        return value
    if isinstance(value, str) and len(value) > fold:
        return f"{value[:fold]}… (+{len(value) - fold} chars)"
    if isinstance(value, dict):
        return {k: fold_strings(v, fold) for k, v in value.items()}
    if isinstance(value, list):
        return [fold_strings(v, fold) for v in value]
    return value


class Body(NamedTuple):
    text: str
    cut: bool  # shortened: "show all" has more
    is_json: bool  # worth highlighting as JSON


def pretty_body(
    data: bytes, *, fold: int | None = FOLD_AT, max_lines: int | None = MAX_LINES
) -> Body:
    """Pretty JSON of a message's bytes (as-is when not JSON), capped unless
    ``max_lines`` is None. A body past ``BIG_BODY`` is not decoded at all while
    capped (its first ``MAX_CHARS`` are shown as sent), and never past
    ``LARGEST_SHOWN``: rendering megabytes of text would freeze the screen."""
    limited = max_lines is not None
    if len(data) > (BIG_BODY if limited else LARGEST_SHOWN):
        shown = data[: MAX_CHARS if limited else LARGEST_SHOWN]
        return Body(shown.decode("utf-8", "replace"), True, False)
    try:
        value = msgspec.json.decode(data)
    except msgspec.DecodeError:
        text = data.decode("utf-8", "replace")
        if limited and len(text) > MAX_CHARS:
            return Body(text[:MAX_CHARS], True, False)
        return Body(text, False, False)
    text = json.dumps(fold_strings(value, fold), indent=2, ensure_ascii=False)
    if max_lines is not None:
        lines = text.split("\n", max_lines)
        if len(lines) > max_lines:
            return Body("\n".join(lines[:max_lines]), True, True)
    return Body(text, False, True)


def raw_text(data: bytes, limit: int | None = 64 * 1024) -> Text:
    """The bytes as they crossed the wire: printable text, escapes for the rest."""
    cut = limit is not None and len(data) > limit
    shown = data[:limit] if cut and limit is not None else data
    text = shown.decode("utf-8", "backslashreplace")
    for char, escape in (("\r", "\\r"), ("\t", "\\t"), ("\0", "\\0")):
        text = text.replace(char, escape)
    out = Text(text)
    if cut:
        out.append(f"\n… {len(data) - len(shown)} more bytes (show all: a)", Style(dim=True))
    return out
