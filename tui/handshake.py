"""The handshake view (``h``): what each conversation declared and offered.

One tree per capture, built when the screen opens from the session's surface
model (:class:`~mcpeek.inspector.surface.ConversationSurface`, the same
object ``mcpeek show --format json`` prints and ``mcpeek diff`` compares):
era and negotiated version, both peers' info and capabilities, the tools,
resources, resource templates and prompts as last listed (with counts; a
definition's schemas open on demand, enter on its node), each definition's
history when it changed, rug pulls in red, and what was used without being
declared or declared and never used.
"""

from __future__ import annotations

import json
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, Tree
from textual.widgets.tree import TreeNode

from mcpeek.inspector.surface import KINDS, ConversationSurface, Drift
from mcpeek.inspector.surface.report import drift_line
from mcpeek.inspector.views.session import SessionModel
from mcpeek.tui.screens import MODAL_CSS

KIND_TITLES = {
    "tools": "tools",
    "resources": "resources",
    "resourceTemplates": "resource templates",
    "prompts": "prompts",
}
SUMMARY_CHARS = 60  # of a description, on an item's line


def peer(info: Any) -> str:
    if not isinstance(info, dict):
        return "(not declared)"
    name = info.get("title") or info.get("name") or "?"
    version = info.get("version")
    return f"{name} {version}" if version else str(name)


def capability_summary(capabilities: Any) -> str:
    """``tools (listChanged) · resources (subscribe, listChanged)`` from a capabilities object."""
    if not isinstance(capabilities, dict):
        return "(not declared)"
    if not capabilities:
        return "(none)"
    parts = []
    for name, value in capabilities.items():
        flags = [k for k, v in value.items() if v is True] if isinstance(value, dict) else []
        parts.append(f"{name} ({', '.join(flags)})" if flags else name)
    return " · ".join(parts)


def one_line(text: Any) -> str:
    if not isinstance(text, str):
        return ""
    line = " ".join(text.split())
    return line if len(line) <= SUMMARY_CHARS else line[: SUMMARY_CHARS - 1] + "…"


def add_json(node: TreeNode[None], value: Any) -> None:
    """``value`` as indented JSON lines under ``node`` (what opens on demand)."""
    for line in json.dumps(value, indent=2, ensure_ascii=False).splitlines():
        node.add_leaf(Text(line, "green"))


def add_item(
    section: TreeNode[None], kind: str, name: str, definition: Any, s: ConversationSurface
) -> None:
    drifts = [d for d in s.drift if d.kind == kind and d.name == name]
    label = Text(name, "bold")
    described = one_line(definition.get("description") if isinstance(definition, dict) else None)
    if described:
        label.append(f"  {described}", "dim")
    if any(d.rug_pull for d in drifts):
        label.append("  RUG PULL", "bold red")
    elif drifts:
        label.append(f"  changed {len(drifts)}x", "yellow")
    node = section.add(label, expand=False)
    if isinstance(definition, dict):
        for member, value in definition.items():
            if member in ("name", "uri", "uriTemplate", "description"):
                continue
            if isinstance(value, (dict, list)):
                add_json(node.add(Text(member, "bold cyan"), expand=False), value)
            else:
                node.add_leaf(Text.assemble((member, "bold cyan"), f": {json.dumps(value)}"))
    history = s.history.get(kind, {}).get(name, [])
    if len(history) > 1:
        past = node.add(Text(f"history ({len(history)} versions)", "bold"), expand=True)
        for version in history:
            gone = version.definition is None
            told = " after list_changed" if version.announced else ""
            shown = past.add(
                Text(f"#{version.seq}{told}" + (": removed" if gone else "")), expand=False
            )
            if not gone:
                add_json(shown, version.definition)


def add_drift(parent: TreeNode[None], drift: list[Drift]) -> None:
    if not drift:
        return
    pulls = sum(d.rug_pull for d in drift)
    title = f"definitions changed ({len(drift)})" + (f", {pulls} RUG PULL" if pulls else "")
    node = parent.add(Text(title, "bold red" if pulls else "bold yellow"), expand=True)
    for item in drift:
        node.add_leaf(Text(drift_line(item), "red" if item.rug_pull else "yellow"))


def add_conversation(tree: Tree[None], s: ConversationSurface) -> None:
    era = f"{s.era or 'era unknown'} {s.protocol_version or ''}".strip()
    root = tree.root.add(
        Text.assemble(("conversation ", "bold"), s.conversation, f"  ({era})"), expand=True
    )
    root.add_leaf(Text.assemble(("client  ", "bold"), peer(s.client_info)))
    root.add_leaf(Text.assemble(("server  ", "bold"), peer(s.server_info)))
    for side, caps in (("client", s.client_capabilities), ("server", s.server_capabilities)):
        node = root.add(
            Text.assemble((f"{side} capabilities  ", "bold"), capability_summary(caps)),
            expand=False,
        )
        if caps is not None:
            add_json(node, caps)
    if s.instructions:
        add_json(root.add(Text("instructions", "bold"), expand=False), s.instructions)
    add_drift(root, s.drift)
    for kind in KINDS:
        if kind not in s.lists:
            continue
        items = s.lists[kind]
        listings = s.listed.get(kind, 0)
        times = f", listed {listings} times" if listings > 1 else ""
        section = root.add(Text(f"{KIND_TITLES[kind]} ({len(items)}{times})", "bold"), expand=True)
        for name, definition in items.items():
            add_item(section, kind, name, definition, s)
    for title, found, style in (
        ("used without being declared", s.undeclared, "bold red"),
        ("declared, never used", s.unused, "bold"),
    ):
        if not found:
            continue
        node = root.add(Text(f"{title} ({len(found)})", style), expand=False)
        for usage in found:
            used = f": {', '.join(usage.methods)}" if usage.methods else ""
            node.add_leaf(f"{usage.side} {usage.what}{used}")


class HandshakeScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,h", "dismiss", "Close")]
    DEFAULT_CSS = MODAL_CSS.format(name="HandshakeScreen")

    def __init__(self, model: SessionModel) -> None:
        super().__init__()
        self.model = model

    def compose(self) -> ComposeResult:
        surfaces = self.model.surface.surfaces()
        tree: Tree[None] = Tree(f"{self.model.name}: {len(surfaces)} conversation(s)")
        tree.show_root = False
        tree.root.expand()
        for surface in surfaces:
            add_conversation(tree, surface)
        if not surfaces:
            tree.root.add_leaf("no message yet")
        with Vertical():
            yield Label(
                Text(f"Handshake {self.model.name} (enter: open, h: close)"), classes="title"
            )
            yield tree
