"""Reading messages and quoting them in findings, for the tools, cache and resources rules.

A finding quotes what the server sent, which may be anything of any size:
:func:`shown` renders a value as short JSON, :func:`id_text` a message's id,
and :func:`summarized` joins at most :data:`MAX_SHOWN` problems into one
sentence. :func:`request_params`, :func:`as_list` and :func:`is_complete`
read a payload without trusting its shape.
"""

from __future__ import annotations

from typing import Any

import msgspec

from mcpeek.inspector.analysis import Entry
from mcpeek.inspector.analysis.peek import EMPTY_RESULT, ResultPeek
from mcpeek.rules.context import RESULT_BIT, MessageContext

MAX_SHOWN = 5  # problems listed in one finding
EXCERPT = 120


def shown(value: Any, limit: int = EXCERPT) -> str:
    """A short JSON rendering of a value for a message."""
    try:
        text = msgspec.json.encode(value).decode()
    except (TypeError, msgspec.EncodeError):
        text = repr(value)
    except RecursionError:
        text = "(nested too deeply to show)"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def summarized(problems: list[str]) -> str:
    """The first :data:`MAX_SHOWN` problems joined by ``;``, and how many more there are."""
    text = "; ".join(problems[:MAX_SHOWN])
    if len(problems) > MAX_SHOWN:
        text += f" (and {len(problems) - MAX_SHOWN} more)"
    return text


def request_params(ctx: MessageContext) -> dict[str, Any]:
    """The params of the request a response answers, as a dict (``{}`` when absent or
    not an object); decoded once for every rule that asks."""
    params = ctx.request_params
    return params if isinstance(params, dict) else {}


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def id_text(ctx: MessageContext) -> str:
    return shown(ctx.entry.id, 40)


def is_complete(result: Any) -> bool:
    """A result that is not an interim ``input_required`` one."""
    return isinstance(result, dict) and result.get("resultType") != "input_required"


def listed_tools(ctx: MessageContext) -> list[Any] | None:
    """The ``tools`` array of a ``tools/list`` result, or ``None`` when there is none:
    the one correlation read (it keeps the tools a conversation declared), unless the
    result is decoded already or correlation could not read it."""
    raw = ctx.entry.record.raw
    if raw is not None and raw[:1] == "{" and not ctx.computed & RESULT_BIT:
        peeked = ctx.conversation.peeked.result
        if type(peeked) is ResultPeek and peeked is not EMPTY_RESULT:
            tools = peeked.tools
            return tools if isinstance(tools, list) else None
    result = ctx.result
    tools = result.get("tools") if isinstance(result, dict) else None
    return tools if isinstance(tools, list) else None


class ListedNames:
    """The names of the tools a ``tools/list`` result lists, in order (a tool that is
    not an object, or whose name is not a string, left out), read once per message for
    every rule that shares it (:meth:`Rule.share`): the name, order and schema rules
    each walked the same tools for the same names."""

    def __init__(self) -> None:
        self._entry: Entry | None = None  # the message last read (a batch's members differ)
        self._names: tuple[str, ...] | None = None

    def of(self, ctx: MessageContext) -> tuple[str, ...] | None:
        """The names of this message's tools; ``None`` when it has no ``tools`` array."""
        entry = ctx.entry
        if entry is not self._entry:
            tools = listed_tools(ctx)
            self._names = (
                None
                if tools is None
                else tuple(
                    [
                        name
                        for tool in tools
                        if isinstance(tool, dict) and isinstance(name := tool.get("name"), str)
                    ]
                )
            )
            self._entry = entry
        return self._names
