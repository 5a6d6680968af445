"""The detail pane: everything about one flow, in tabs.

Request and response pretty-printed and highlighted (capped and folded until
"show all"), the raw bytes as they crossed the wire, the HTTP exchanges that
carried them, timing per id and per logical call, the notifications tied to
the flow (progress as a bar) and its violations with their spec links.
Content is built from the model when a flow is opened; the widgets only
display it.
"""

from __future__ import annotations

from typing import Any

import msgspec
from rich.console import Group, RenderableType
from rich.padding import Padding
from rich.progress_bar import ProgressBar
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Static, TabbedContent, TabPane

from mcpeek.inspector.analysis.flow import Entry
from mcpeek.inspector.records import Act, wire_bytes
from mcpeek.inspector.views.flowline import clock
from mcpeek.inspector.views.session import FlowItem, SessionModel
from mcpeek.tui.render import (
    FOLD_AT,
    LARGEST_SHOWN,
    MAX_CHARS,
    MAX_LINES,
    SEVERITY_STYLE,
    latency_text,
    pretty_body,
    raw_text,
)

HIGHLIGHT_UP_TO = 256 * 1024  # characters: longer bodies are shown without colours

TABS = ("request", "response", "raw", "http", "timing", "notifications", "violations")


def _heading(entry: Entry, label: str) -> Text:
    arrow = "→ client to server" if entry.dir == "c2s" else "← server to client"
    heading = Text.assemble(
        (label, "bold"), f"  seq {entry.seq}  {clock(entry.t)}  {arrow}", style="dim"
    )
    if entry.record.made is not None:  # not the peer's bytes: a fault's, a script's
        heading.append(f"  ⚡ made by mcpeek ({entry.record.made})", "bold yellow")
    return heading


def _original(act: Act, show_all: bool) -> list[RenderableType]:
    """What the peer had sent before mcpeek acted on it (an ``act`` record)."""
    how = f"⚡ mcpeek: {act.action} ({act.by}: {act.rule})"
    if act.ms is not None:
        how += f", {act.ms:g} ms"
    data = wire_bytes(act)
    shown = raw_text(data, LARGEST_SHOWN if show_all else MAX_CHARS)
    return [Text(how + "; the peer sent:", style="bold yellow"), shown]


def _body(entry: Entry, show_all: bool) -> RenderableType:
    body = pretty_body(
        entry.wire(),
        fold=None if show_all else FOLD_AT,
        max_lines=None if show_all else MAX_LINES,
    )
    shown: RenderableType
    if body.is_json and len(body.text) <= HIGHLIGHT_UP_TO:
        shown = Syntax(
            body.text, "json", theme="ansi_dark", word_wrap=True, background_color="default"
        )
    else:  # not JSON, or too long to highlight quickly
        shown = Text(body.text)
    if not body.cut:
        return shown
    more = "copy (c) or save (w) the flow for all of it" if show_all else "press a to show all"
    return Group(shown, Text(f"… capped: {more}", style="bold yellow"))


def messages_view(entries: list[tuple[str, Entry]], show_all: bool) -> RenderableType:
    if not entries:
        return Text("(none)", style="dim")
    parts: list[RenderableType] = []
    for label, entry in entries:
        parts += [_heading(entry, label), _body(entry, show_all), Text("")]
    return Group(*parts)


def raw_view(item: FlowItem, show_all: bool, acts: dict[int, Act] | None = None) -> RenderableType:
    parts: list[RenderableType] = []
    for entry in item.flow.entries:
        data = entry.wire()
        head = _heading(entry, f"{len(data)} bytes")
        if entry.record.raw_b64 is not None:
            head.append("  (not UTF-8)", "bold red")
        parts += [head, raw_text(data, LARGEST_SHOWN if show_all else MAX_CHARS)]
        act = acts.get(entry.seq) if acts else None
        if act is not None:
            parts += _original(act, show_all)
        parts.append(Text(""))
    return Group(*parts) if parts else Text("(no messages)", style="dim")


def http_view(item: FlowItem, model: SessionModel) -> RenderableType:
    channels = list(dict.fromkeys(e.ch for e in item.flow.entries if e.ch in model.exchanges))
    if not channels:
        return Text("(not carried over HTTP)", style="dim")
    parts: list[RenderableType] = []
    for channel in channels:
        for record in model.exchanges[channel]:
            line = Text(f"{channel} {record.phase}", style="bold")
            if record.method:
                line.append(f"  {record.method} {record.path or ''}")
            if record.status is not None:
                line.append(f"  {record.status}", "green" if record.status < 400 else "red")
            if record.reason:
                line.append(f"  ({record.reason})", "yellow")
            parts.append(line)
            for name, value in record.headers or ():
                parts.append(Text.assemble(("  " + name, "cyan"), ": ", value))
        parts.append(Text(""))
    return Group(*parts)


def timing_view(item: FlowItem) -> RenderableType:
    flow = item.flow
    table = Table("id", "sent", "answered", "latency", "outcome", box=None, pad_edge=False)
    for attempt in flow.attempts:
        response = attempt.response
        table.add_row(
            Text(str(attempt.request.id)),
            clock(attempt.request.t),
            clock(response.t) if response else "—",
            latency_text(attempt.latency_ms) or "—",
            attempt.result_type or (response.kind if response else flow.status),
        )
    total = Text.assemble(
        ("whole call: ", "bold"),
        latency_text(flow.latency_ms) or "not answered",
        f"  ({len(flow.attempts)} round{'s' if len(flow.attempts) != 1 else ''})",
        f"  status {flow.status}" + (" (late)" if flow.late else ""),
    )
    return Group(total, Text(""), table)


def _params(entry: Entry) -> dict[str, Any]:
    try:
        value = msgspec.json.decode(entry.wire())
    except msgspec.DecodeError:
        return {}
    params = value.get("params") if isinstance(value, dict) else None
    return params if isinstance(params, dict) else {}


def notifications_view(item: FlowItem) -> RenderableType:
    flow = item.flow
    notes = flow.notifications + ([flow.cancel] if flow.cancel is not None else [])
    if not notes:
        return Text("(no notifications tied to this flow)", style="dim")
    start = flow.started
    parts: list[RenderableType] = []
    last_progress: dict[str, Any] | None = None
    for entry in sorted(notes, key=lambda e: e.seq):
        params = _params(entry)
        line = Text(f"+{(entry.t - start) * 1000:8.1f} ms  ", style="dim")
        line.append(entry.method or "?", "bold")
        if entry.method == "notifications/progress":
            last_progress = params
            line.append(f"  {params.get('progress')}/{params.get('total', '?')}")
            if params.get("message"):
                line.append(f"  {params['message']}", "italic")
        elif entry.method == "notifications/message":
            line.append(f"  [{params.get('level')}] {str(params.get('data'))[:200]}")
        parts.append(line)
    if last_progress is not None:
        done, total = last_progress.get("progress"), last_progress.get("total")
        if isinstance(done, int | float) and isinstance(total, int | float) and total > 0:
            bar = ProgressBar(total=float(total), completed=float(done), width=40)
            parts.insert(0, Padding(bar, (0, 0, 1, 0)))  # a line under: it is not one of them
    return Group(*parts)


def violations_view(item: FlowItem) -> RenderableType:
    if not item.findings:
        return Text("(no violations)", style="dim")
    parts: list[RenderableType] = []
    for finding in item.findings:
        line = Text()
        line.append(f"{finding.severity.upper():<8}", SEVERITY_STYLE.get(finding.severity, ""))
        line.append(finding.rule, "bold")
        line.append(f"  msgs {', '.join(map(str, finding.msgs))}\n", "dim")
        line.append("  " + finding.message + "\n")
        if finding.spec:
            line.append("  " + finding.spec, f"underline blue link {finding.spec}")
        parts.append(line)
    return Group(*parts)


class DetailPane(Vertical):
    """Tabs of one flow; :meth:`show` fills them."""

    DEFAULT_CSS = """
    DetailPane { height: 2fr; border-top: solid $accent; }
    DetailPane TabbedContent { height: 1fr; }
    DetailPane VerticalScroll { height: 1fr; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.item: FlowItem | None = None
        self.shown_version = -1  # the item's version when it was drawn

    def compose(self) -> ComposeResult:
        with TabbedContent():
            for tab in TABS:
                with TabPane(tab.capitalize(), id=f"tab-{tab}"), VerticalScroll():
                    yield Static(id=f"body-{tab}")

    def step_tab(self, step: int) -> None:
        """The next (``step`` 1) or previous (-1) tab, round the end."""
        tabs = self.query_one(TabbedContent)
        at = TABS.index(tabs.active.removeprefix("tab-"))
        tabs.active = f"tab-{TABS[(at + step) % len(TABS)]}"

    def open_tab(self, tab: str) -> None:
        self.query_one(TabbedContent).active = f"tab-{tab}"

    def show(self, item: FlowItem, model: SessionModel, *, show_all: bool = False) -> None:
        self.item = item
        self.shown_version = item.version
        flow = item.flow
        requests = [
            (f"request {i + 1}" if len(flow.attempts) > 1 else "request", a.request)
            for i, a in enumerate(flow.attempts)
        ]
        if flow.orphan is not None:
            requests.append((flow.status, flow.orphan))
        responses = [
            (f"response {i + 1}" if len(flow.attempts) > 1 else "response", a.response)
            for i, a in enumerate(flow.attempts)
            if a.response is not None
        ]
        views: dict[str, RenderableType] = {
            "request": messages_view(requests, show_all),
            "response": messages_view(responses, show_all),
            "raw": raw_view(item, show_all, model.acts),
            "http": http_view(item, model),
            "timing": timing_view(item),
            "notifications": notifications_view(item),
            "violations": violations_view(item),
        }
        for tab, view in views.items():
            self.query_one(f"#body-{tab}", Static).update(view)
        tabs = self.query_one(TabbedContent)
        count = len(item.findings)
        tabs.get_tab("tab-violations").label = f"Violations ({count})" if count else "Violations"
        notes = len(flow.notifications)
        tabs.get_tab("tab-notifications").label = (
            f"Notifications ({notes})" if notes else "Notifications"
        )
