"""The viewer's modal screens: help, violations by rule, session summary, a prompt,
the question before quitting.

Each is built from the data model (or the action and filter registries) when
opened; none keeps state of its own beyond what it shows.
"""

from __future__ import annotations

import json
from collections import defaultdict

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Input, Label, Static, Tree

from mcpeek.inspector.filters import FILTER_SYNTAX, filter_help
from mcpeek.inspector.records import Violation
from mcpeek.inspector.views.session import SEVERITY_RANK, SessionModel
from mcpeek.tui.actions import ACTIONS, key_label
from mcpeek.tui.render import SEVERITY_STYLE

MAX_PER_RULE = 500  # violations listed under one rule before "… N more"

MODAL_CSS = """
{name} {{ align: center middle; }}
{name} > Vertical {{
    width: 90%; height: 85%; border: thick $accent; background: $surface; padding: 0 1;
}}
{name} .title {{ text-style: bold; width: 100%; content-align: center middle; }}
"""


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,question_mark", "dismiss", "Close")]
    DEFAULT_CSS = MODAL_CSS.format(name="HelpScreen")

    def compose(self) -> ComposeResult:
        keys = Table("key", "action", box=None, title="Keys", title_justify="left")
        for spec in ACTIONS:
            keys.add_row(Text(key_label(spec.key), "bold cyan"), spec.help)
        keys.add_row(Text("↑ ↓ PgUp PgDn Home End", "bold cyan"), "move in the flow list")
        keys.add_row(Text("space", "bold cyan"), "expand a multi round-trip chain")
        keys.add_row(Text("ctrl+p", "bold cyan"), "command palette: every action by name")
        ops = Table("filter", "argument", "matches", "example", box=None)
        for code, argument, description, example in filter_help():
            ops.add_row(Text(code, "bold cyan"), argument, description, Text(example, "green"))
        with Vertical():
            yield Label("mcpeek view — help", classes="title")
            with VerticalScroll():
                yield Static(Group(keys, Text(""), Text("Filter language", "bold"), ops))
                yield Static(Text(FILTER_SYNTAX))


def group_by_rule(findings: list[Violation]) -> dict[str, list[Violation]]:
    groups: dict[str, list[Violation]] = defaultdict(list)
    for finding in findings:
        groups[finding.rule].append(finding)
    return dict(
        sorted(
            groups.items(),
            key=lambda kv: (-max(SEVERITY_RANK.get(v.severity, 0) for v in kv[1]), kv[0]),
        )
    )


class ViolationsScreen(ModalScreen[int | None]):
    """Every violation of the session, grouped by rule; selecting one returns its row."""

    BINDINGS = [Binding("escape,q,v", "dismiss(None)", "Close")]
    DEFAULT_CSS = MODAL_CSS.format(name="ViolationsScreen")

    def __init__(self, model: SessionModel) -> None:
        super().__init__()
        self.model = model

    def compose(self) -> ComposeResult:
        groups = group_by_rule(list(self.model.findings))
        total = sum(len(v) for v in groups.values())
        tree: Tree[int | None] = Tree(f"{total} violations in {len(groups)} rules")
        tree.root.expand()
        for rule, found in groups.items():
            severity = max((v.severity for v in found), key=lambda s: SEVERITY_RANK.get(s, 0))
            label = Text.assemble(
                (f"{severity.upper():<8}", SEVERITY_STYLE.get(severity, "")),
                (rule, "bold"),
                f"  x{len(found)}",
            )
            node = tree.root.add(label, expand=total <= 50)
            for finding in found[:MAX_PER_RULE]:
                row = self.model.row_of_seq(finding.msgs[-1]) if finding.msgs else None
                number = self.model.items[row].flow.number if row is not None else None
                where = f"flow {number}" if number is not None else "no flow"  # the # column
                node.add_leaf(Text(f"{where}: {finding.message}"), data=row)
            if len(found) > MAX_PER_RULE:
                node.add_leaf(f"… {len(found) - MAX_PER_RULE} more", data=None)
        with Vertical():
            yield Label("Violations (enter: jump to the flow)", classes="title")
            yield tree

    def on_tree_node_selected(self, event: Tree.NodeSelected[int | None]) -> None:
        if event.node.data is not None:
            self.dismiss(event.node.data)


def summary_view(model: SessionModel) -> RenderableType:
    summary = model.summary()
    parts: list[RenderableType] = []
    head = Table(box=None, show_header=False)
    for key in ("file", "transport", "target", "created", "records", "messages", "flows"):
        value = summary[key]
        head.add_row(
            Text(key, "bold"), Text(" ".join(value) if isinstance(value, list) else str(value))
        )
    if summary["tool_errors"]:
        head.add_row(Text("tool errors", "bold dark_orange"), str(summary["tool_errors"]))
    head.add_row(Text("violations", "bold"), str(summary["violations"]))
    head.add_row(Text("state", "bold"), "ended" if model.ended else "live or cut short")
    parts.append(head)
    for conversation in summary["conversations"]:
        table = Table(
            box=None, show_header=False, title=Text(f"conversation {conversation['key']}")
        )
        for key in ("era", "protocol_version", "messages"):
            table.add_row(Text(key, "bold"), Text(str(conversation[key])))
        for key in ("client_info", "server_info", "client_capabilities", "server_capabilities"):
            value = conversation[key]
            shown = json.dumps(value, indent=1) if value is not None else "(not declared)"
            table.add_row(Text(key, "bold"), Text(shown))
        table.add_row(
            Text("tools", "bold"), Text(", ".join(conversation["tools"]) or "(none seen)")
        )
        parts += [Text(""), table]
    if model.problems:
        parts += [Text(""), Text("problems reading the file:", "bold yellow")]
        parts += [Text("  " + problem) for problem in model.problems[:50]]
    return Group(*parts)


class SummaryScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,s", "dismiss", "Close")]
    DEFAULT_CSS = MODAL_CSS.format(name="SummaryScreen")

    def __init__(self, model: SessionModel) -> None:
        super().__init__()
        self.model = model

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(Text(f"Session {self.model.name}"), classes="title")
            with VerticalScroll():
                yield Static(summary_view(self.model))


class PromptScreen(ModalScreen[str | None]):
    """One line of input (a comment, a file name); escape cancels."""

    BINDINGS = [Binding("escape", "dismiss(None)", "Cancel")]
    DEFAULT_CSS = """
    PromptScreen { align: center middle; }
    PromptScreen > Vertical {
        width: 70; height: auto; border: thick $accent; background: $surface;
    }
    """

    def __init__(self, question: str, value: str = "") -> None:
        super().__init__()
        self.question = question
        self.value = value

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(Text(self.question))
            yield Input(value=self.value, id="prompt")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value)


class QuitScreen(ModalScreen[bool]):
    """Asks before quitting a viewer whose quitting stops a proxy: a stray ``q``
    must not cut off the clients talking through it."""

    BINDINGS = [
        Binding("y,q,enter,ctrl+c", "dismiss(True)", "Quit"),  # app keys stop at a modal
        Binding("n,escape", "dismiss(False)", "Stay"),
    ]
    DEFAULT_CSS = """
    QuitScreen { align: center middle; }
    QuitScreen > Label {
        width: auto; height: auto; border: thick $error; background: $surface; padding: 1 2;
    }
    """

    def compose(self) -> ComposeResult:
        yield Label(
            Text.assemble(
                "Quitting stops the proxy: its clients lose the server.\n\n",
                ("y", "bold"),
                " or ",
                ("q", "bold"),
                ": stop and quit    ",
                ("n", "bold"),
                " or ",
                ("esc", "bold"),
                ": stay",
            )
        )
