"""A flow as one row of the list, in columns sized to their content.

:class:`Columns` holds the widest cell of each column seen so far in a
session (the session's :class:`mcpeek.tui.session_view.SessionView` keeps it up to
date as flows arrive and change); :func:`fit` turns it and the screen width
into a :class:`Layout`, which the rows and the column header both follow, so
titles always sit above their cells. Only the method column gives way when
the screen is narrow; extra room stays at the right end, not in the middle
of a row.

Pure functions from the data model to Rich text: nothing here keeps state.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from rich.text import Text

from mcpeek.inspector.analysis import Flow
from mcpeek.inspector.analysis.flow import Attempt
from mcpeek.inspector.views.flowline import clock, made_by_mcpeek
from mcpeek.inspector.views.session import FlowItem
from mcpeek.tui.render import (
    SEVERITY_STYLE,
    SLOW_STYLE,
    STATUS_STYLE,
    elapsed_text,
    ids_text,
    latency_text,
)

TITLES = ("#", "method  name", "id", "status", "latency", "prog")
LEAD = 3  # the mark, the worst violation's dot, a space
W_TIME = 12  # HH:MM:SS.mmm
W_IDS_MAX = 12  # a long string id is cut: the detail shows it whole
W_LABEL_MIN = 10  # the method column gives way down to this
CHAIN_MARK = 2  # "▸ " before a chain's method


class Columns(NamedTuple):
    """Widest cell of each column (at least its title)."""

    number: int = len(TITLES[0])
    label: int = len(TITLES[1])
    ids: int = len(TITLES[2])
    status: int = len(TITLES[3])
    latency: int = len(TITLES[4])
    progress: int = len(TITLES[5])

    def widen(self, items: Iterable[FlowItem]) -> Columns:
        """These columns, widened to fit the cells of ``items``. Called on every flow
        that arrives or changes, so it measures without building the cells' text
        where it can (an integer id, no latency)."""
        number, label, ids, status, latency, progress = self
        for item in items:
            flow = item.flow
            number = max(number, len(str(flow.number)))
            width = len(flow.method or "(no method)") + (len(flow.name) + 1 if flow.name else 0)
            if item.comment:
                width += len(item.comment) + 4
            label = max(label, width + (CHAIN_MARK if len(flow.attempts) > 1 else 0))
            flow_ids = flow.ids
            if len(flow_ids) == 1 and type(flow_ids[0]) is int:
                ids = max(ids, len(str(flow_ids[0])))
            elif flow_ids:
                ids = max(ids, len(ids_text(flow_ids)))
            status = max(status, len(flow.status) + flow.late)
            if flow.latency_ms is not None:
                latency = max(latency, len(latency_text(flow.latency_ms)))
            if flow.progress_count:
                progress = max(progress, len(str(flow.progress_count)) + 1)
        return Columns(number, label, ids, status, latency, progress)


class Layout(NamedTuple):
    """Where the cells go on a screen ``width`` columns wide."""

    width: int
    number: int
    label: int
    ids: int
    status: int
    latency: int
    progress: int

    @property
    def label_start(self) -> int:
        return LEAD + self.number + 1 + W_TIME + 1 + 2


def fit(columns: Columns, width: int) -> Layout:
    """The columns on a screen ``width`` wide: the method column takes what the
    others leave, up to its widest cell."""
    ids = min(columns.ids, W_IDS_MAX)
    others = LEAD + columns.number + 1 + W_TIME + 1 + 2 + 1 + ids + 1 + columns.status + 1
    others += columns.latency + 1 + columns.progress
    label = max(min(columns.label, width - others), W_LABEL_MIN)
    return Layout(
        width, columns.number, label, ids, columns.status, columns.latency, columns.progress
    )


def _label_text(item: FlowItem) -> str:
    flow = item.flow
    text = flow.method or "(no method)"
    if flow.name:
        text += " " + flow.name
    if item.comment:
        text += "  # " + item.comment
    return text


def _cells(item: FlowItem) -> tuple[str, str, str, str, str, str]:
    """The text of each sized column (the label counted with a chain's mark)."""
    flow = item.flow
    chain = " " * CHAIN_MARK if len(flow.attempts) > 1 else ""
    return (
        str(flow.number),
        chain + _label_text(item),
        ids_text(flow.ids),
        flow.status + ("*" if flow.late else ""),
        latency_text(flow.latency_ms),
        f"{flow.progress_count}p" if flow.progress_count else "",
    )


def _fixed(text: str, width: int, *, right: bool = False) -> str:
    """``text`` in exactly ``width`` cells: padded, or cut with an ellipsis."""
    if len(text) > width:
        return text[: max(width - 1, 0)] + "…"
    return text.rjust(width) if right else text.ljust(width)


class Timer(NamedTuple):
    """A request in flight on a live capture: whole seconds so far, and whether that
    is past ``--slow``. Part of a row's cache key: the row is drawn again when the
    timer shows another second or turns slow, not on every frame."""

    seconds: int
    slow: bool


#: In the mark column of a flow whose messages mcpeek edited, answered or corrupted.
MADE_MARK = "~"


def flow_row(
    item: FlowItem, layout: Layout, *, expanded: bool = False, timer: Timer | None = None
) -> Text:
    """One flow as one line: mark, worst violation, number, time, direction,
    method and name, ids, status, latency (a request in flight: its ``timer``),
    progress count."""
    flow = item.flow
    number, _, ids, status, latency, progress = _cells(item)
    status_style = STATUS_STYLE.get(flow.status, "")
    latency_style = ""
    if timer is not None:
        latency = elapsed_text(timer.seconds)
        latency_style = SLOW_STYLE if timer.slow else "yellow"
        status_style = SLOW_STYLE if timer.slow else status_style
    text = Text(no_wrap=True, overflow="ellipsis", end="")
    if item.marked or not made_by_mcpeek(flow):
        text.append("▌" if item.marked else " ", "bold magenta")
    else:  # mcpeek changed a message of it (--fault, -s): the detail says how
        text.append(MADE_MARK, "bold yellow")
    text.append("● " if item.worst else "  ", SEVERITY_STYLE.get(item.worst or "", ""))
    text.append(_fixed(number, layout.number, right=True) + " ", "dim")
    text.append(f"{clock(flow.started):<{W_TIME}} ", "dim")
    arrow = "→" if flow.sender == "c2s" else "←"
    text.append(arrow + " ", "bold cyan" if flow.sender == "c2s" else "bold green")
    label = Text(no_wrap=True, overflow="ellipsis", end="")
    if len(flow.attempts) > 1:
        label.append("▾ " if expanded else "▸ ", "bold")
    label.append(flow.method or "(no method)", "bold")
    if flow.name:
        label.append(" " + flow.name, "italic")
    if item.comment:
        label.append("  # " + item.comment, "dim italic")
    label.truncate(layout.label, overflow="ellipsis", pad=True)
    text.append_text(label)
    text.append(" " + _fixed(ids, layout.ids, right=True) + " ", "dim")
    if item.held is not None:  # its answer is held by the proxy (--intercept): a timer
        text.append(_fixed("held", layout.status), "bold yellow")
        text.append(" " + _fixed(f"{item.held:.1f} s", layout.latency, right=True) + " ")
    else:
        text.append(_fixed(status, layout.status), status_style)
        text.append(" ")
        text.append(_fixed(latency, layout.latency, right=True), latency_style)
        text.append(" ")
    text.append(_fixed(progress, layout.progress, right=True), "dim")
    text.truncate(layout.width, overflow="ellipsis")
    return text


def column_header(layout: Layout) -> Text:
    """The column titles above the rows of :func:`flow_row` laid out alike."""
    number, label, ids, status, latency, progress = TITLES
    text = Text(no_wrap=True, overflow="ellipsis", end="")
    text.append(" " * LEAD + _fixed(number, layout.number, right=True) + " ")
    text.append(f"{'time':<{W_TIME}} " + "  ")
    text.append(_fixed(label, layout.label) + " " + _fixed(ids, layout.ids, right=True) + " ")
    text.append(_fixed(status, layout.status) + " " + _fixed(latency, layout.latency, right=True))
    text.append(" " + _fixed(progress, layout.progress, right=True))
    text.truncate(layout.width, overflow="ellipsis")
    return text


def attempt_row(flow: Flow, index: int, layout: Layout) -> Text:
    """A sub-row of an expanded MRTR chain: one attempt, under the method column."""
    attempt: Attempt = flow.attempts[index]
    text = Text(no_wrap=True, overflow="ellipsis", end="")
    text.append(" " * layout.label_start)
    text.append(f"└ round {index + 1}: ", "dim")
    text.append(f"id {ids_text([attempt.request.id])}")
    outcome = attempt.result_type or ("answered" if attempt.response else "no answer")
    text.append(f"  {outcome}", STATUS_STYLE.get(outcome, ""))
    if attempt.latency_ms is not None:
        text.append(f"  {latency_text(attempt.latency_ms)}")
    if attempt.input_request_keys:
        text.append("  asks: " + ", ".join(attempt.input_request_keys), "italic")
    text.truncate(layout.width, overflow="ellipsis")
    return text
