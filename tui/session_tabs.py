"""The captures as tabs: opening them, the capture directory, switching.

A mixin of :class:`mcpeek.tui.app.McpeekApp` (like :mod:`mcpeek.tui.session_actions`), so
the app module keeps to layout and loading.

Without files the app watches the capture directory, which need not exist
yet (the viewer may start before any proxy ran; it creates nothing itself).
Tabs go newest first; a capture that appears later goes first too, and is
shown at once unless the user is busy elsewhere (the detail pane, a pop-up,
the filter or search input): then a notification offers ``L`` to go there.
"""

from __future__ import annotations

import stat
from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text
from textual.widgets import Tab, Tabs

from mcpeek.tui.detail import DetailPane
from mcpeek.tui.flow_list import FlowList
from mcpeek.tui.loader import is_live
from mcpeek.tui.session_actions import SessionActions
from mcpeek.tui.session_view import SessionView

if TYPE_CHECKING:
    from textual.widgets import Static


class SessionTabs(SessionActions):
    """Tab handling; the state it uses is the app's (declared here)."""

    directory: Path | None
    follow_mode: bool | None
    views: list[SessionView]
    current: SessionView | None
    query_mode: str
    tabs: Tabs
    flow_list: FlowList
    detail: DetailPane
    status_bar: Static
    tabs_opened: int  # tabs ever added: a new tab's id is never a closed one's
    last_arrival: SessionView | None  # the capture that appeared last while running

    def start_loading(self, view: SessionView) -> None:
        raise NotImplementedError

    def add_session(self, path: Path, *, first: bool = False) -> SessionView:
        """A tab for the capture at ``path``: last, or ``first`` (one that just appeared)."""
        follow = self.follow_mode if self.follow_mode is not None else is_live(path)
        self.tabs_opened += 1
        view = SessionView(path, follow=follow, tab_id=f"s{self.tabs_opened}")
        tab = Tab(Text(path.name), id=view.tab_id)
        if first and self.views:
            self.tabs.add_tab(tab, before=self.views[0].tab_id)
            self.views.insert(0, view)
        else:
            self.tabs.add_tab(tab)
            self.views.append(view)
        if self.current is None or follow:
            self.start_loading(view)
        if self.current is None:
            self.activate(view)
        return view

    def scan_directory(self, *, arrivals: bool = True) -> None:
        """Open the captures of the directory not open yet; ``arrivals``: they appeared
        while the viewer ran (else: the ones there at the start)."""
        assert self.directory is not None
        known = {view.model.path for view in self.views}
        try:
            found = [
                p
                for p in self.directory.iterdir()
                if p.name.endswith((".jsonl", ".gz")) and _has_data(p)
            ]
        except OSError:  # not there yet (no proxy ran): look again later
            return
        new = sorted((p for p in found if p not in known), key=lambda p: (_mtime(p), p.name))
        if not arrivals:
            for path in reversed(new):  # newest first
                self.add_session(path)
            return
        for path in new:  # the newest ends up first
            self.arrived(self.add_session(path, first=True))

    def arrived(self, view: SessionView) -> None:
        """Show a capture that just appeared, or say so if the user is busy elsewhere."""
        self.last_arrival = view
        if view is self.current:
            return  # the first capture: shown already
        if self.detail.display or self.query_mode or len(self.screen_stack) > 1:
            self.notify(f"new capture {view.model.name}: press L to show it", title="new session")
        else:
            self.activate(view)

    def action_latest_session(self) -> None:
        if self.last_arrival is not None:
            self.activate(self.last_arrival)

    def waiting_text(self) -> Text:
        where = self.directory or "the command line"
        return Text(
            f"waiting for captures in {where}: start a proxy (mcpeek stdio -- CMD, "
            "mcpeek http --upstream URL); it shows up here"
        )

    def activate(self, view: SessionView) -> None:
        if self.current is not None:  # each capture keeps its cursor and follow mode
            self.current.cursor_item = self.flow_list.current_item_index
            self.current.stick = self.flow_list.follow
            self.current.columns = self.flow_list.columns
        self.current = view
        self.start_loading(view)
        if self.tabs.active != view.tab_id:
            self.tabs.active = view.tab_id
        self.show_view(view)

    def show_view(self, view: SessionView) -> None:
        flow_list = self.flow_list
        flow_list.follow = view.stick
        flow_list.show(view.model, view.matches, view.cursor_item, view.expanded, view.columns)
        self.update_status()

    def on_tabs_tab_activated(self, event: Tabs.TabActivated) -> None:
        if event.tab is None or event.tab.id is None or event.tab.id != self.tabs.active:
            return  # stale: a later switch (keys read in one go) already moved on
        view = next((v for v in self.views if v.tab_id == event.tab.id), None)
        if view is not None and view is not self.current:
            self.activate(view)


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def _has_data(path: Path) -> bool:
    """A regular file that is not empty: no FIFOs or folders, and no capture whose
    proxy has not written its header yet (a later scan finds it)."""
    try:
        info = path.stat()
    except OSError:
        return False
    return stat.S_ISREG(info.st_mode) and info.st_size > 0
