"""Two captures' server surfaces side by side: what was added, removed or changed.

Conversations are paired in the order they appear (the first of A with the
first of B): session ids and origins differ from one run to the next, so
their keys cannot pair them. For each pair, in this order: the era and the
negotiated protocol version, the server's info, both sides' capabilities
(member by member), then the tools, resources, resource templates and prompts
as last listed (item by item: names, titles, descriptions, schemas,
annotations — every member of a definition counts). Where a value changed,
:class:`PathDifference` lists the JSON Pointers where the two part
(``/inputSchema/properties/url/type``), from the same walk ``replay`` uses.
"""

from __future__ import annotations

from typing import Any

import msgspec

from mcpeek.inspector.replay.canonical import canonical
from mcpeek.inspector.replay.diff import MISSING, diff
from mcpeek.inspector.surface.model import KINDS, Change, ConversationSurface, changed_fields


class PathDifference(msgspec.Struct, omit_defaults=True):
    """Where two values part: ``a`` or ``b`` is left out where that side has nothing."""

    path: str
    a: Any = msgspec.UNSET
    b: Any = msgspec.UNSET


class SurfaceDifference(msgspec.Struct, omit_defaults=False):
    """One thing of the surface that differs between A and B.

    ``area``: ``conversation``, ``era``, ``protocol_version``, ``server_info``,
    ``server_capabilities``, ``client_capabilities`` or one of the list kinds
    (``tools``, ``resources``, ``resourceTemplates``, ``prompts``); ``name``: the
    item or capability (empty for a single value); ``conversation``: the pair's
    index (0 for the first conversation of each capture).
    """

    conversation: int
    area: str
    name: str
    change: Change
    fields: list[str]
    paths: list[PathDifference]


def path_difference(path: str, a: Any, b: Any) -> PathDifference:
    """A :class:`PathDifference`, with :data:`MISSING` sides left out."""
    out = PathDifference(path)
    if a is not MISSING:
        out.a = a
    if b is not MISSING:
        out.b = b
    return out


def paths_between(a: Any, b: Any) -> list[PathDifference]:
    return [path_difference(d.path, d.recorded, d.live) for d in diff(a, b)]


def _members(
    index: int, area: str, a: dict[str, Any], b: dict[str, Any]
) -> list[SurfaceDifference]:
    """Member by member (capabilities, items of a list)."""
    out = []
    for name in list(a) + [n for n in b if n not in a]:
        before, after = a.get(name, MISSING), b.get(name, MISSING)
        if before is MISSING:
            out.append(SurfaceDifference(index, area, name, "added", [], []))
        elif after is MISSING:
            out.append(SurfaceDifference(index, area, name, "removed", [], []))
        elif canonical(before) != canonical(after):
            fields = changed_fields(before, after)
            paths = paths_between(before, after)
            out.append(SurfaceDifference(index, area, name, "changed", fields, paths))
    return out


def _value(index: int, area: str, a: Any, b: Any) -> list[SurfaceDifference]:
    if canonical(a) == canonical(b):
        return []
    change: Change = "added" if a is None else "removed" if b is None else "changed"
    return [SurfaceDifference(index, area, "", change, [], paths_between(a, b))]


def _as_object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def compare_conversation(
    index: int, a: ConversationSurface, b: ConversationSurface
) -> list[SurfaceDifference]:
    out = _value(index, "era", a.era, b.era)
    out += _value(index, "protocol_version", a.protocol_version, b.protocol_version)
    out += _value(index, "server_info", a.server_info, b.server_info)
    for side in ("server_capabilities", "client_capabilities"):
        before, after = getattr(a, side), getattr(b, side)
        if before is None or after is None:
            out += _value(index, side, before, after)
        else:
            out += _members(index, side, _as_object(before), _as_object(after))
    for kind in KINDS:
        if kind in a.lists or kind in b.lists:
            out += _members(index, kind, a.lists.get(kind, {}), b.lists.get(kind, {}))
    return out


def compare_surfaces(
    a: list[ConversationSurface], b: list[ConversationSurface]
) -> list[SurfaceDifference]:
    """Every difference between two captures' surfaces (see the module docstring)."""
    out: list[SurfaceDifference] = []
    for index in range(max(len(a), len(b))):
        if index >= len(a):
            out.append(
                SurfaceDifference(index, "conversation", b[index].conversation, "added", [], [])
            )
        elif index >= len(b):
            out.append(
                SurfaceDifference(index, "conversation", a[index].conversation, "removed", [], [])
            )
        else:
            out += compare_conversation(index, a[index], b[index])
    return out
