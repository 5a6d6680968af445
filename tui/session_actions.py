"""What the keys do: the ``action_*`` methods of the viewer app.

Declared in :mod:`mcpeek.tui.actions` (keys, titles, help), implemented here, as a
mixin of :class:`mcpeek.tui.app.McpeekApp`, so the app module keeps to layout
and loading. The filter and search keys are :mod:`mcpeek.tui.query_actions`'s.
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import TYPE_CHECKING

from textual import work
from textual.notifications import SeverityLevel
from textual.widgets import Input, Static, Tabs

from mcpeek.inspector.capture.files import CaptureFileError
from mcpeek.inspector.views.session import FlowItem
from mcpeek.tui.detail import DetailPane
from mcpeek.tui.export import flow_as_json, save_capture
from mcpeek.tui.flow_list import FlowList
from mcpeek.tui.handshake import HandshakeScreen
from mcpeek.tui.query_actions import QueryActions
from mcpeek.tui.screens import HelpScreen, PromptScreen, QuitScreen, SummaryScreen, ViolationsScreen

if TYPE_CHECKING:
    from mcpeek.tui.session_view import SessionView


class SessionActions(QueryActions):
    """The actions; the state and helpers they use are the app's (declared here)."""

    views: list[SessionView]
    current: SessionView | None
    query_mode: str
    search_text: str
    show_all: bool
    runs_proxy: bool
    tabs: Tabs
    flow_list: FlowList
    detail: DetailPane
    query_input: Input
    status_bar: Static

    def update_status(self) -> None:
        raise NotImplementedError

    def activate(self, view: SessionView) -> None:
        raise NotImplementedError

    def apply_changes(self, view: SessionView, changed: Collection[int] = ()) -> None:
        raise NotImplementedError

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = False,
    ) -> None:
        """Notifications carry file names, filters and messages from the traffic:
        plain text unless a caller says otherwise ("[/]" is not markup here)."""
        super().notify(message, title=title, severity=severity, timeout=timeout, markup=markup)

    def _selected(self) -> FlowItem | None:
        return self.flow_list.current_item

    # -- panes and screens -------------------------------------------------------------
    def action_open_detail(self) -> None:
        item = self._selected()
        if item is None or self.current is None:
            return
        detail = self.detail
        self.show_detail(True)
        detail.show(item, self.current.model, show_all=self.show_all)

    def action_close(self) -> None:
        if self.query_mode:
            self.close_query()
            return
        self.show_detail(False)
        self.show_all = False
        self.flow_list.focus()

    def show_detail(self, shown: bool) -> None:
        self.detail.display = shown
        self.refresh_bindings()  # the footer offers the detail's keys only while it is open

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "detail_tab":
            return self.detail.display  # hidden from the footer while the detail is closed
        return True

    def action_detail_tab(self, step: int) -> None:
        self.detail.step_tab(step)

    async def action_leave(self) -> None:
        """``q``: back out of the detail pane first, quit from the list."""
        if self.detail.display:
            self.action_close()
        else:
            await self.action_quit()

    async def action_quit(self) -> None:
        """Quit; under ``mcpeek http`` (quitting stops the proxy) after asking."""
        if not self.runs_proxy or isinstance(self.screen, QuitScreen):
            self.exit()  # asked already (ctrl+q, a priority key, reaches past the question)
            return

        def answered(stop: bool | None) -> None:
            if stop:
                self.exit()

        self.push_screen(QuitScreen(), answered)

    def action_show_all(self) -> None:
        self.show_all = True
        self.action_open_detail()

    def action_help(self) -> None:
        self.push_screen(HelpScreen())

    def action_held(self) -> None:
        """The messages the capture's proxy holds (``--intercept``), to release."""
        if self.current is None:
            return
        from mcpeek.inspector.act.control import control_path
        from mcpeek.tui.held import HeldScreen

        path = control_path(self.current.model.path)
        if not path.exists():
            self.notify("no proxy holds messages for this capture (see --intercept)")
            return
        self.push_screen(HeldScreen(path, self.current.model))

    def action_summary(self) -> None:
        if self.current is not None:
            self.push_screen(SummaryScreen(self.current.model))

    def action_handshake(self) -> None:
        if self.current is not None:
            self.push_screen(HandshakeScreen(self.current.model))

    def action_violations(self) -> None:
        if self.current is None:
            return

        def jump(row: int | None) -> None:
            if row is None or self.current is None:
                return
            if self.current.filter is not None:
                self.notify("the filter was cleared to show that flow")
                self.set_filter("")
                self.current.cursor_item = row
            self.flow_list.move_to_item(row)
            self.action_open_detail()
            self.detail.open_tab("violations")  # what the user came for

        self.push_screen(ViolationsScreen(self.current.model), jump)

    # -- sessions ---------------------------------------------------------------------------
    def action_next_session(self) -> None:
        self._switch(1)

    def action_previous_session(self) -> None:
        self._switch(-1)

    def _switch(self, step: int) -> None:
        if len(self.views) < 2 or self.current is None:
            return
        index = (self.views.index(self.current) + step) % len(self.views)
        # at once, not when the tab bar reports back: keys read in one go each count
        self.activate(self.views[index])

    def action_toggle_follow(self) -> None:
        flow_list = self.flow_list
        if flow_list.follow:
            flow_list.follow = False
            self.update_status()
        else:
            flow_list.action_last()

    # -- marking, copying, saving -------------------------------------------------------------
    def action_mark(self) -> None:
        item = self._selected()
        if item is not None:
            item.marked = not item.marked
            self._edited(item)

    def action_comment(self) -> None:
        item = self._selected()
        if item is None:
            return

        def done(text: str | None) -> None:
            if text is not None:
                item.comment = text.strip()
                self._edited(item)

        self.push_screen(PromptScreen("Comment on this flow:", item.comment), done)

    def _edited(self, item: FlowItem) -> None:
        """A mark or a comment changed: redraw the row, and re-apply a filter on them."""
        item.version += 1
        index = self.flow_list.current_item_index
        if self.current is not None and index is not None:
            self.apply_changes(self.current, (index,))

    def action_copy(self) -> None:
        item = self._selected()
        if item is None:
            return
        text = flow_as_json(item)
        self.copy_to_clipboard(text)
        self.notify(f"copied flow {item.flow.number} ({len(text)} bytes) as JSON")

    def action_save(self) -> None:
        view = self.current
        if view is None:
            return
        path = view.model.path
        suggestion = str(path.with_name(path.name.split(".")[0] + "-filtered.jsonl"))

        def done(answer: str | None) -> None:
            if not answer or not answer.strip():
                return
            try:
                target = Path(answer.strip()).expanduser()
            except RuntimeError as exc:  # "~nosuchuser/x": no such home directory
                self.notify(f"cannot save to {answer.strip()}: {exc}", severity="error")
                return
            self.save_flows(view, target)

        self.push_screen(PromptScreen("Save the shown flows to:", suggestion), done)

    @work(thread=True, group="save")
    def save_flows(self, view: SessionView, target: Path) -> None:
        items = [view.model.items[i] for i in view.matches]
        try:
            count = save_capture(view.model, items, target)
        except (CaptureFileError, OSError) as exc:
            self.call_from_thread(self.notify, f"cannot save: {exc}", severity="error")
            return
        self.call_from_thread(
            self.notify, f"saved {len(items)} flows ({count} records) to {target}"
        )
