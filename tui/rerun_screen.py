"""A re-run's answer beside the recorded one, with the differences marked.

Both sides are shown as ``mcpeek replay`` compares them (the id, volatile
``_meta`` members and a sealed ``requestState`` left out, see
:func:`~mcpeek.inspector.replay.diff.normalize`), one block per multi
round-trip attempt, as indented JSON. A line is marked where the replay's
comparison found a difference: at its JSON Pointer or under it (red on the
recorded side, green on the live side). Below: the verdict, the problems,
the notes, the live server's violations (errors and warnings), and where the
re-run's own capture was written.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rich.console import Group
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Label, Static

from mcpeek.inspector.replay.diff import escape, normalize
from mcpeek.inspector.replay.replay_plan import decode
from mcpeek.inspector.replay.replay_report import FlowReport, flow_title, text_lines
from mcpeek.inspector.replay.replay_result import LiveFlow
from mcpeek.tui.screens import MODAL_CSS

RECORDED_MARK = "bold red"
LIVE_MARK = "bold green"


def json_text(value: Any, marked: set[str], style: str) -> Text:
    """``value`` as indented JSON, the lines at or under a ``marked`` pointer in ``style``."""
    out = Text()
    _emit(out, value, "", "", 0, marked, style, last=True)
    return out


def _is_marked(pointer: str, marked: set[str]) -> bool:
    return any(pointer == m or pointer.startswith(m + "/") for m in marked)


def _emit(
    out: Text,
    value: Any,
    pointer: str,
    label: str,
    depth: int,
    marked: set[str],
    style: str,
    *,
    last: bool,
) -> None:
    indent = "  " * depth
    comma = "" if last else ","
    line_style = style if _is_marked(pointer, marked) else ""
    if isinstance(value, dict) and value:
        out.append(f"{indent}{label}{{\n", line_style)
        for index, (key, item) in enumerate(value.items()):
            child = f"{pointer}/{escape(str(key))}"
            name = json.dumps(str(key)) + ": "
            _emit(out, item, child, name, depth + 1, marked, style, last=index == len(value) - 1)
        out.append(f"{indent}}}{comma}\n", line_style)
    elif isinstance(value, list) and value:
        out.append(f"{indent}{label}[\n", line_style)
        for index, item in enumerate(value):
            child = f"{pointer}/{index}"
            _emit(out, item, child, "", depth + 1, marked, style, last=index == len(value) - 1)
        out.append(f"{indent}]{comma}\n", line_style)
    else:
        text = json.dumps(value, ensure_ascii=False)
        out.append(f"{indent}{label}{text}{comma}\n", line_style)


def sides(live: LiveFlow, report: FlowReport) -> tuple[Group, Group]:
    """The recorded and the live answers, attempt by attempt, marked where they differ."""
    recorded_parts: list[Text] = []
    live_parts: list[Text] = []
    sent = {attempt.index: attempt for attempt in live.attempts}
    attempts = live.recorded.attempts
    for index, attempt in enumerate(attempts):
        marked = {d.path for d in report.differences if d.attempt == index + 1}
        heading = Text(f"attempt {index + 1}\n", "bold") if len(attempts) > 1 else Text("")
        want = decode(attempt.response.record) if attempt.response is not None else None
        mine = sent.get(index)
        got = mine.response if mine is not None else None
        recorded_parts += [heading, _side(want, marked, RECORDED_MARK, "no recorded response")]
        absent = "not sent" if mine is None else mine.problem or "no live response"
        live_parts += [heading, _side(got, marked, LIVE_MARK, absent)]
    return Group(*recorded_parts), Group(*live_parts)


def _side(message: Any, marked: set[str], style: str, absent: str) -> Text:
    if message is None:
        return Text(f"({absent})\n", "dim italic")
    return json_text(normalize(message), marked, style)


class RerunScreen(ModalScreen[None]):
    """The answer of a re-run flow beside its recording."""

    BINDINGS = [Binding("escape,q", "dismiss", "Close")]
    DEFAULT_CSS = (
        MODAL_CSS.format(name="RerunScreen")
        + """
    RerunScreen Horizontal { height: 1fr; }
    RerunScreen VerticalScroll { width: 1fr; border: round $panel; }
    RerunScreen #verdict { height: auto; max-height: 12; }
    """
    )

    def __init__(
        self,
        report: FlowReport,
        live: LiveFlow,
        against: str,
        capture: Path | None,
        violations: list[str] | None = None,
        notes: list[str] | None = None,
    ) -> None:
        super().__init__()
        self.notes = notes or []  # the replay's own (a failed handshake, a note of HTTP)
        self.violations = violations or []  # the live server's, as flag lines
        self.report = report
        self.live = live
        self.against = against
        self.capture = capture

    def compose(self) -> ComposeResult:
        recorded, live = sides(self.live, self.report)
        lines = text_lines(self.report)[1:]
        verdict = Text("same as recorded" if self.report.same else "DIFFERENT", "bold")
        verdict.stylize("green" if self.report.same else "red")
        where = f"re-run against {self.against}"
        if self.capture is not None:
            where += f"; its capture: {self.capture}"
        with Vertical():
            yield Label(flow_title(self.report), classes="title")
            with Horizontal():
                with VerticalScroll(id="recorded") as left:
                    left.border_title = "recorded"
                    yield Static(recorded)
                with VerticalScroll(id="live") as right:
                    right.border_title = "live"
                    yield Static(live)
            flags = [Text(f"  {line}", "red") for line in self.violations]
            notes = [Text(f"note: {note}", "yellow") for note in self.notes]
            parts = [verdict, *map(Text, lines), *flags, *notes, Text(where, "dim")]
            body = Text("\n").join(parts)
            yield Static(body, id="verdict")
