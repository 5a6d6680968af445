"""What was used without being declared, and declared without being used.

A capability is *used* when a method of its feature crosses the wire (the
tables of :mod:`mcpeek.inspector.analysis.capabilities`, which the
``capability.not-declared`` rule judges by): a client request ``tools/call``
uses the server's ``tools``, a server request ``sampling/createMessage`` the
client's ``sampling``, a server notification ``notifications/tools/list_changed``
the server's ``tools`` and its ``tools.listChanged`` flag. A
side whose capabilities were never seen is not judged (nothing was declared
either way). Items are judged too: a ``tools/call`` of a tool the server never
listed (when it listed tools at all), and a listed tool nobody called.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from mcpeek.inspector.analysis.capabilities import (
    CAPABILITY_FLAG,
    CLIENT_CAPABILITY,
    SERVER_CAPABILITY,
    SERVER_NOTIFICATION_CAPABILITY,
)
from mcpeek.inspector.surface.model import Usage

#: The top-level capabilities whose use can be seen on the wire (``experimental``
#: and extensions cannot be told apart from traffic: never called unused).
_JUDGED = frozenset(
    {"tools", "resources", "prompts", "logging", "completions", "roots", "sampling", "elicitation"}
)
_ITEM_METHODS = {"tools/call": ("tools", "tool"), "prompts/get": ("prompts", "prompt")}


def capabilities_of(direction: str, method: str) -> list[tuple[str, str]]:
    """Whose capabilities a method sent that way uses, and which:
    ``[("server", "tools"), ("server", "tools.listChanged")]``."""
    out: list[tuple[str, str]] = []
    if direction == "c2s" and method in SERVER_CAPABILITY:
        out.append(("server", SERVER_CAPABILITY[method]))
    elif direction == "s2c" and method in SERVER_NOTIFICATION_CAPABILITY:
        out.append(("server", SERVER_NOTIFICATION_CAPABILITY[method]))
    elif method in CLIENT_CAPABILITY and (direction == "s2c") != method.startswith(
        "notifications/"
    ):
        out.append(("client", CLIENT_CAPABILITY[method]))
    if out and method in CAPABILITY_FLAG:
        out.append((out[0][0], CAPABILITY_FLAG[method]))
    return out


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
    used: Iterable[tuple[str, str]],
    called: Mapping[str, set[str]],
    capabilities: Mapping[str, Any],
    lists: Mapping[str, Mapping[str, Any]],
) -> tuple[list[Usage], list[Usage]]:
    """``(undeclared, unused)`` for one conversation.

    ``used`` are the ``(direction, method)`` pairs sent; ``called`` maps ``tools/call`` and
    ``prompts/get`` to the names asked for; ``capabilities`` is
    ``{"server": ..., "client": ...}``; ``lists`` the surface's lists.
    """
    by_capability: dict[tuple[str, str], list[str]] = {}
    for direction, method in used:
        for found in capabilities_of(direction, method):
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
