"""``mcpeek view``: the Textual app over one or more captures.

The app composes the headless pieces: a :class:`SessionModel` per capture
(filled by a loader thread, see :mod:`mcpeek.tui.loader`), the filter language of
:mod:`mcpeek.inspector.filters`, and the widgets that draw them (the virtualised
:class:`FlowList`, the :class:`DetailPane`, modal screens). Per capture it
keeps a :class:`SessionView`: the filter and the rows it lets through.

Without files it shows every capture of the capture directory, newest first,
following those that are still being written, and picks up new ones as
proxies start (the capture file is the bus: nothing to start in order).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Collection
from pathlib import Path

from rich.text import Text
from textual import work
from textual.app import App, ComposeResult
from textual.widgets import Footer, Input, Static, Tabs
from textual.worker import get_current_worker

from mcpeek.inspector.act.control import control_path
from mcpeek.inspector.views.in_flight import DEFAULT_SLOW
from mcpeek.tui.actions import ActionCommands, bindings
from mcpeek.tui.column_header import ColumnHeader
from mcpeek.tui.detail import DetailPane
from mcpeek.tui.flow_list import FlowList
from mcpeek.tui.held import held_now, mark_held
from mcpeek.tui.loader import SessionUpdated, load_into
from mcpeek.tui.recheck import recheck
from mcpeek.tui.rerun_actions import RerunActions
from mcpeek.tui.session_tabs import SessionTabs
from mcpeek.tui.session_view import SessionView

DIRECTORY_POLL = 2.0  # seconds between looks for new captures in the directory
TICK = 0.5  # seconds between redraws of the status line and the running timers
MEASURE_AT_ONCE = 5000  # new rows of one update sized at once (more: as they are shown)
HELD_POLL = 1.0  # seconds between looks at what the proxy holds (--intercept)


class McpeekApp(RerunActions, SessionTabs):
    TITLE = "mcpeek"
    BINDINGS = bindings()  # type: ignore[assignment]  # Binding is one of the allowed forms
    COMMANDS = App.COMMANDS | {ActionCommands}
    CSS = """
    #columns { height: 1; color: $text-muted; text-style: bold; }
    #status { height: 1; background: $panel; }
    #query { dock: bottom; display: none; }
    #detail { display: none; }
    Tabs { height: 2; }
    Footer.-compact FooterLabel { margin: 0 1 0 0; }
    Footer.-compact KeyGroup.-compact { padding-left: 0; }
    ToastRack { margin-bottom: 2; }  /* above the status line and the footer */
    .-query-open ToastRack { margin-bottom: 5; }  /* and above the input */
    """

    def __init__(
        self,
        paths: list[Path],
        *,
        directory: Path | None = None,
        follow: bool | None = None,
        recheck_rules: bool = True,
        runs_proxy: bool = False,
        slow: float = DEFAULT_SLOW,
        clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__()
        self.slow = slow  # seconds in flight after which a request is shown as slow
        self.clock = clock  # a live capture's times are the proxy's wall clock
        self.paths = paths
        self.directory = directory
        self.follow_mode = follow  # None: follow the captures that look live
        self.recheck_rules = recheck_rules
        self.runs_proxy = runs_proxy  # quitting stops a proxy (mcpeek http): ask first
        self.views: list[SessionView] = []
        self.current: SessionView | None = None
        self.query_mode = ""  # "filter" or "search" while the input is open
        self.search_text = ""
        self.show_all = False
        self.directory_poll = DIRECTORY_POLL
        self.tabs_opened = 0
        self.last_arrival: SessionView | None = None

    # -- layout ---------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        # Kept as attributes: handlers reach them whatever screen is on top,
        # and timers that fire while the app shuts down find them still there.
        self.tabs = Tabs(id="sessions")
        self.flow_list = FlowList(id="flows")
        self.flow_list.strips.slow = self.slow
        self.detail = DetailPane(id="detail")
        self.query_input = Input(id="query")
        self.status_bar = Static(id="status")
        self.column_header = ColumnHeader(self.flow_list, id="columns")
        yield self.tabs
        yield self.column_header
        yield self.flow_list
        yield self.detail
        yield self.query_input
        yield self.status_bar
        # Compact, and without the palette's key (the help lists it): at 80 columns
        # the footer must still show Save and Quit.
        yield Footer(compact=True, show_command_palette=False)

    def on_mount(self) -> None:
        for path in self.paths:
            self.add_session(path)
        if self.directory is not None:
            self.scan_directory(arrivals=False)
            self.set_interval(self.directory_poll, self.scan_directory)
        if not self.views:
            self.status_bar.update(self.waiting_text())
            self.flow_list.placeholder = self.waiting_text()
        self.set_interval(TICK, self.update_status)
        self.set_interval(HELD_POLL, self.poll_held)
        self.flow_list.focus()

    async def poll_held(self) -> None:
        """The status line counts what the capture's proxy holds (``--intercept``)."""
        if self.current is not None:
            held = await held_now(control_path(self.current.model.path))
            self.current.held = len(held)
            if mark_held(self.current.model, held):
                self.flow_list.refresh()

    # -- loading ----------------------------------------------------------------------
    def start_loading(self, view: SessionView) -> None:
        if view.started:
            return
        view.started = True
        self.load(view)

    @work(thread=True, group="load")
    def load(self, view: SessionView) -> None:
        worker = get_current_worker()
        model = view.model

        def update() -> threading.Event:
            message = SessionUpdated(model)
            self.post_message(message)
            return message.shown

        error = load_into(
            model,
            view.progress,
            update,
            follow=view.follow,
            cancelled=lambda: worker.is_cancelled,
        )
        self.post_message(SessionUpdated(model, done=True, error=error))
        if error is None and self.recheck_rules and not worker.is_cancelled:
            found = recheck(model.path, cancelled=lambda: worker.is_cancelled)
            if found is not None:
                model.set_findings(found)
                view.rechecked = True
                self.post_message(SessionUpdated(model))

    def on_session_updated(self, message: SessionUpdated) -> None:
        view = next((v for v in self.views if v.model is message.model), None)
        if view is None:
            message.shown.set()
            return
        if message.done:
            view.done = True
            view.error = message.error
            if message.error:
                self.notify(message.error, title="cannot open", severity="error", timeout=10)
        problems = view.model.problems
        if len(problems) > view.problems_noted:
            self.notify(
                f"{view.model.name}: {len(problems)} problem(s) reading it, "
                f"the rest is shown: {problems[view.problems_noted]}",
                severity="warning",
                timeout=8,
            )
            view.problems_noted = len(problems)
        changes = view.model.take_changes()
        self.apply_changes(view, changed=changes.changed)
        if view is self.current:
            detail = self.detail
            item = detail.item
            # only when the flow shown changed: re-rendering a big body per update froze
            if detail.display and item is not None and item.version != detail.shown_version:
                detail.show(item, view.model, show_all=self.show_all)
        self.update_status()
        self.call_after_refresh(message.shown.set)

    def apply_changes(self, view: SessionView, changed: Collection[int] = ()) -> None:
        """Filter the rows that arrived (and re-filter those that changed)."""
        new, entered, left = view.take_rows(changed)
        # Columns fit every row while updates are small (live traffic); the rows of a
        # big load are measured as they come on screen (measuring costs microseconds).
        few = len(new) + len(changed) <= MEASURE_AT_ONCE
        measured = [*new, *changed] if few else []
        if view is not self.current:
            view.matches.extend(new)
            view.columns = view.columns.widen(view.model.items[i] for i in measured)
            return
        flow_list = self.flow_list
        if entered or left:
            flow_list.patch(entered, left)  # the list shares view.matches
        flow_list.extend(new)
        flow_list.widen(measured)
        flow_list.refresh_rows()

    def on_flow_list_columns_changed(self, message: FlowList.ColumnsChanged) -> None:
        self.column_header.refresh()

    def on_flow_list_highlighted(self, message: FlowList.Highlighted) -> None:
        detail = self.detail
        item = message.item
        if detail.display and item is None:  # the filter left no row: nothing to detail
            self.show_detail(False)
        elif (
            detail.display
            and item is not None
            and self.current is not None
            and (item is not detail.item or item.version != detail.shown_version)
        ):
            detail.show(item, self.current.model, show_all=self.show_all)
        self.update_status()

    def on_flow_list_selected(self, message: FlowList.Selected) -> None:
        self.action_open_detail()

    def update_status(self) -> None:
        """The status line, and the timers of the requests in flight (a live capture's)."""
        view = self.current
        if view is not None:
            now = self.clock() if view.follow and not view.done else None
            self.flow_list.tick(now)
            status = view.status(following=self.flow_list.follow, now=now, slow=self.slow)
            self.status_bar.update(Text(status))
