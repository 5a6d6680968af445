"""Every user action of the viewer, declared once.

The same declarations become the app's key bindings, the footer, the ``?``
help screen and the entries of the command palette, so a key can never be
documented in one place and missing in another.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

from textual.binding import Binding
from textual.command import DiscoveryHit, Hit, Hits, Provider


class ActionSpec(NamedTuple):
    key: str  # Textual key names, comma-separated
    action: str  # the App action it runs
    title: str  # short: footer and palette
    help: str  # one line for the help screen and the palette
    footer: bool = True
    group: str = ""  # keys of one group share one footer entry (← → Tab)


ACTIONS: tuple[ActionSpec, ...] = (
    ActionSpec("question_mark", "help", "Help", "show keys, filter language and actions"),
    ActionSpec("f", "filter", "Filter", "filter flows (~m tools/call & ~v error …)"),
    ActionSpec("slash", "search", "Search", "incremental search in method, name and ids"),
    ActionSpec("n", "search_next", "Next match", "jump to the next search match", False),
    ActionSpec("N", "search_previous", "Prev match", "jump to the previous search match", False),
    ActionSpec("enter", "open_detail", "Detail", "open the selected flow's detail", False),
    ActionSpec("escape", "close", "Close", "close the detail pane or the input", False),
    ActionSpec("left", "detail_tab(-1)", "Prev tab", "the detail's previous tab", group="Tab"),
    ActionSpec("right", "detail_tab(1)", "Next tab", "the detail's next tab", group="Tab"),
    ActionSpec("v", "violations", "Violations", "all violations grouped by rule"),
    ActionSpec("s", "summary", "Summary", "the session: era, versions, peers, capabilities"),
    ActionSpec(
        "h",
        "handshake",
        "Handshake",
        "per conversation: capabilities, tools, drift, rug pulls",
        False,
    ),
    ActionSpec(
        "H",
        "held",
        "Held",
        "messages the proxy holds (--intercept): forward, edit, drop, answer",
        False,
    ),
    ActionSpec(
        "right_square_bracket", "next_session", "Next session", "switch to the next capture", False
    ),
    ActionSpec(
        "left_square_bracket",
        "previous_session",
        "Prev session",
        "switch to the previous capture",
        False,
    ),
    ActionSpec("L", "latest_session", "Latest", "switch to the capture that appeared last", False),
    ActionSpec("F", "toggle_follow", "Follow", "stick to the newest flow (toggle)"),
    ActionSpec("m", "mark", "Mark", "mark or unmark the selected flow", False),
    ActionSpec("semicolon", "comment", "Comment", "comment the selected flow", False),
    ActionSpec("c", "copy", "Copy", "copy the selected flow's messages as JSON (OSC 52)", False),
    ActionSpec(
        "r",
        "rerun",
        "Re-run",
        "re-run the selected flow against a fresh server, shown beside",
        False,
    ),
    ActionSpec(
        "R",
        "rerun_live",
        "Re-run live",
        "re-run the selected flow against a running mcpeek http's server",
        False,
    ),
    ActionSpec("w", "save", "Save", "save the shown (filtered) flows to a new capture"),
    ActionSpec("a", "show_all", "Show all", "show large bodies in full in the detail", False),
    ActionSpec("q", "leave", "Quit", "close the detail pane, else leave mcpeek view"),
    ActionSpec("ctrl+c", "quit", "Quit now", "leave mcpeek view", False),
)


def bindings() -> list[Binding]:
    return [
        Binding(
            spec.key,
            spec.action,
            spec.title,
            show=spec.footer,
            tooltip=spec.help,
            group=Binding.Group(spec.group, compact=True) if spec.group else None,
        )
        for spec in ACTIONS
    ]


def key_label(key: str) -> str:
    names = {
        "question_mark": "?",
        "slash": "/",
        "semicolon": ";",
        "escape": "esc",
        "right_square_bracket": "]",
        "left_square_bracket": "[",
        "left": "←",
        "right": "→",
    }
    return ", ".join(names.get(k, k) for k in key.split(","))


class ActionCommands(Provider):
    """The command palette's view of :data:`ACTIONS`."""

    def _entries(self) -> Iterator[tuple[str, ActionSpec]]:
        for spec in ACTIONS:
            yield f"{spec.title} ({key_label(spec.key)})", spec

    async def discover(self) -> Hits:
        for label, spec in self._entries():
            yield DiscoveryHit(label, self._runner(spec.action), help=spec.help)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for label, spec in self._entries():
            score = matcher.match(f"{label} {spec.help}")
            if score > 0:
                yield Hit(
                    score, matcher.highlight(label), self._runner(spec.action), help=spec.help
                )

    def _runner(self, action: str):  # type: ignore[no-untyped-def]
        async def run() -> None:
            await self.app.run_action(action)

        return run
