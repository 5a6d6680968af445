"""The server surface of one conversation, as plain data (the shape every front end reads).

A *surface* is what the two peers declared to each other and what the server
offered: the era and negotiated protocol version, both sides' info and
capabilities, and the tools, resources, resource templates and prompts as the
server last listed them. Built by :class:`~mcpeek.inspector.surface.listen.SurfaceListener`
from the analyser's messages; read by the viewer's handshake screen, by
``mcpeek show --format json`` (its ``conversation`` line) and by ``mcpeek diff``.

Every field is JSON data (msgspec Structs), so ``msgspec.json.encode`` of a
:class:`ConversationSurface` is the documented JSON object (docs/diff.md).
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from mcpeek.inspector.replay.canonical import canonical

#: The four lists a server offers, by the list method that returns them.
LIST_METHODS: dict[str, str] = {
    "tools/list": "tools",
    "resources/list": "resources",
    "resources/templates/list": "resourceTemplates",
    "prompts/list": "prompts",
}
KINDS: tuple[str, ...] = tuple(LIST_METHODS.values())
#: The member that names an item of each list (a tool's ``name``, a resource's ``uri``).
KEY_FIELD: dict[str, str] = {
    "tools": "name",
    "resources": "uri",
    "resourceTemplates": "uriTemplate",
    "prompts": "name",
}
#: The notification that announces a change of each list (resources/list_changed
#: covers the templates too: the spec has no notification of their own).
LIST_CHANGED: dict[str, tuple[str, ...]] = {
    "notifications/tools/list_changed": ("tools",),
    "notifications/resources/list_changed": ("resources", "resourceTemplates"),
    "notifications/prompts/list_changed": ("prompts",),
}

Change = Literal["added", "removed", "changed"]


class Version(msgspec.Struct, omit_defaults=False):
    """One state of one definition: what the list answer with message ``seq`` said.

    ``definition`` is ``None`` when that listing no longer held the item.
    ``announced`` tells whether a ``list_changed`` notification came between the
    previous complete listing and this one (always ``False`` for the first).
    """

    seq: int
    definition: Any
    announced: bool


class Drift(msgspec.Struct, omit_defaults=False):
    """A definition that changed between two listings of one conversation.

    ``fields`` are the item's top-level members that differ (``description``,
    ``inputSchema``…). ``rug_pull`` marks a changed definition that no
    ``list_changed`` announced: the server swapped what a tool does under a
    client that had already read (and perhaps approved) it — the pattern behind
    tool poisoning.
    """

    kind: str
    name: str
    change: Change
    before_seq: int
    after_seq: int
    fields: list[str]
    announced: bool
    rug_pull: bool


class Usage(msgspec.Struct, omit_defaults=False):
    """A declaration and its use that do not match.

    ``side`` is whose declaration it is (``server`` or ``client``); ``what`` a
    capability path (``tools``, ``tools.listChanged``, ``sampling``) or an item
    (``tool:NAME``, ``prompt:NAME``, ``resource:URI``); ``methods`` the methods
    that used it (empty for something declared and never used).
    """

    side: str
    what: str
    methods: list[str]


class ConversationSurface(msgspec.Struct, omit_defaults=False):
    """The surface of one conversation (see the module docstring).

    ``conversation`` is the conversation's key, as flows name it (``stdio``,
    ``http:session:ID``, ``http:origin``).

    ``lists`` maps each kind in :data:`KINDS` that the server listed to its
    items by key (paginated answers merged), as last listed; ``listings`` the
    seq of each complete listing's last page; ``history`` every state of every
    item (first listing included); ``drift`` what changed after the first
    listing; ``list_changed`` the seqs of the ``list_changed`` notifications per
    kind. ``used`` counts the methods each side sent (``c2s:tools/call``).
    ``undeclared``: used without being declared; ``unused``: declared, never used.
    """

    conversation: str
    era: str | None
    protocol_version: str | None
    client_info: Any
    server_info: Any
    client_capabilities: Any
    server_capabilities: Any
    instructions: str | None
    lists: dict[str, dict[str, Any]]
    listings: dict[str, list[int]]
    history: dict[str, dict[str, list[Version]]]
    drift: list[Drift]
    list_changed: dict[str, list[int]]
    used: dict[str, int]
    undeclared: list[Usage]
    unused: list[Usage]

    @property
    def rug_pulls(self) -> list[Drift]:
        return [d for d in self.drift if d.rug_pull]


def changed_fields(before: Any, after: Any) -> list[str]:
    """The top-level members of two definitions that differ (all, if one is not an object)."""
    if not isinstance(before, dict) or not isinstance(after, dict):
        return []
    keys = list(before) + [k for k in after if k not in before]
    return [
        k
        for k in keys
        if k not in before or k not in after or canonical(before[k]) != canonical(after[k])
    ]


def conversation_line(surface: ConversationSurface) -> dict[str, Any]:
    """The ``conversation`` object of ``mcpeek show --format json``: the surface with
    ``"kind": "conversation"`` first (flow lines have no ``kind``; they have ``flow``)."""
    return {"kind": "conversation", **msgspec.to_builtins(surface)}
