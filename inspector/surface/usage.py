"""What was used without being declared, and declared without being used.

A capability is *used* when a method of its feature crosses the wire: a
client request ``tools/call`` uses the server's ``tools``, a server request
``sampling/createMessage`` the client's ``sampling``, a server notification
``notifications/tools/list_changed`` the server's ``tools.listChanged``. A
side whose capabilities were never seen is not judged (nothing was declared
either way). Items are judged too: a ``tools/call`` of a tool the server never
listed (when it listed tools at all), and a listed tool nobody called.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcpeek.inspector.surface.model import Usage

# (direction, method prefix) -> (whose capability, capability path)
_FEATURES: tuple[tuple[str, str, str, str], ...] = (
    ("c2s", "tools/", "server", "tools"),
    ("c2s", "resources/subscribe", "server", "resources.subscribe"),
    ("c2s", "resources/", "server", "resources"),
    ("c2s", "prompts/", "server", "prompts"),
    ("c2s", "logging/", "server", "logging"),
    ("c2s", "completion/", "server", "completions"),
    ("s2c", "notifications/message", "server", "logging"),
    ("s2c", "notifications/tools/list_changed", "server", "tools.listChanged"),
    ("s2c", "notifications/resources/list_changed", "server", "resources.listChanged"),
    ("s2c", "notifications/resources/updated", "server", "resources.subscribe"),
    ("s2c", "notifications/prompts/list_changed", "server", "prompts.listChanged"),
    ("s2c", "roots/", "client", "roots"),
    ("c2s", "notifications/roots/list_changed", "client", "roots.listChanged"),
    ("s2c", "sampling/", "client", "sampling"),
    ("s2c", "elicitation/", "client", "elicitation"),
)
#: The top-level capabilities whose use can be seen on the wire (``experimental``
#: and extensions cannot be told apart from traffic: never called unused).
_JUDGED = frozenset(
    {"tools", "resources", "prompts", "logging", "completions", "roots", "sampling", "elicitation"}
)
_ITEM_METHODS = {"tools/call": ("tools", "tool"), "prompts/get": ("prompts", "prompt")}


def capability_of(direction: str, method: str) -> tuple[str, str] | None:
    """Whose capability a method uses, and which (``("server", "tools")``)."""
    for sender, prefix, side, path in _FEATURES:
        if sender == direction and method.startswith(prefix):
            return side, path
    return None


def declares(capabilities: Any, path: str) -> bool:
    """Whether ``capabilities`` declare ``path`` (``tools``, ``tools.listChanged``)."""
    top, _, sub = path.partition(".")
    value = capabilities.get(top) if isinstance(capabilities, dict) else None
    if value is None or value is False:
        return False
    if not sub:
        return True
    return isinstance(value, dict) and bool(value.get(sub))


def mismatches(
    used: Mapping[str, int],
    called: Mapping[str, set[str]],
    capabilities: Mapping[str, Any],
    lists: Mapping[str, Mapping[str, Any]],
) -> tuple[list[Usage], list[Usage]]:
    """``(undeclared, unused)`` for one conversation.

    ``used`` counts ``"dir:method"``; ``called`` maps ``tools/call`` and
    ``prompts/get`` to the names asked for; ``capabilities`` is
    ``{"server": ..., "client": ...}``; ``lists`` the surface's lists.
    """
    by_capability: dict[tuple[str, str], list[str]] = {}
    for key in used:
        direction, _, method = key.partition(":")
        found = capability_of(direction, method)
        if found is not None:
            by_capability.setdefault(found, []).append(method)
    undeclared = [
        Usage(side, path, sorted(methods))
        for (side, path), methods in sorted(by_capability.items())
        if capabilities.get(side) is not None and not declares(capabilities[side], path)
    ]
    unused: list[Usage] = []
    for side in ("server", "client"):
        declared = capabilities.get(side)
        if not isinstance(declared, dict):
            continue
        seen = {path.partition(".")[0] for s, path in by_capability if s == side}
        for top in sorted(declared):
            if top in _JUDGED and declares(declared, top) and top not in seen:
                unused.append(Usage(side, top, []))
    for method, (kind, label) in _ITEM_METHODS.items():
        listed = lists.get(kind)
        if listed is None:
            continue  # never listed: nothing to hold the calls against
        names = called.get(method, set())
        undeclared += [
            Usage("server", f"{label}:{n}", [method]) for n in sorted(names - set(listed))
        ]
        unused += [Usage("server", f"{label}:{n}", []) for n in sorted(set(listed) - names)]
    return undeclared, unused
