"""The query box: filtering the flow list and searching it (``f``, ``/``, ``n``, ``N``).

A mixin under :class:`mcpeek.tui.session_actions.SessionActions` (the app's other
keys): the filter is compiled by :mod:`mcpeek.inspector.filters` and run over
the capture's rows in a worker; a search moves the cursor to the next row
whose method, name or id has the text, also in a worker. Either way typing
stays fluid over a million rows: each new run cancels the previous one.
"""

from __future__ import annotations

import time
from array import array
from collections.abc import Collection
from typing import TYPE_CHECKING

from textual import work
from textual.app import App
from textual.widgets import Input
from textual.worker import get_current_worker

from mcpeek.inspector.filters import FilterError, compile_filter, filter_rows
from mcpeek.inspector.views.session import FlowItem
from mcpeek.tui.display_rows import SUB_BITS
from mcpeek.tui.flow_list import FlowList

if TYPE_CHECKING:
    from mcpeek.tui.session_view import SessionView


class QueryActions(App[None]):
    """The filter and the search; the state they use is the app's (declared here)."""

    current: SessionView | None
    query_mode: str
    search_text: str
    flow_list: FlowList
    query_input: Input

    def show_view(self, view: SessionView) -> None:
        raise NotImplementedError

    def apply_changes(self, view: SessionView, changed: Collection[int] = ()) -> None:
        raise NotImplementedError

    # -- the query box ------------------------------------------------------------------
    def _open_query(self, mode: str, value: str, placeholder: str) -> None:
        query = self.query_input
        self.query_mode = mode
        query.placeholder = placeholder
        query.value = value
        query.display = True
        self.add_class("-query-open")  # toasts make room for it
        query.focus()

    def action_filter(self) -> None:
        current = self.current.filter.text if self.current and self.current.filter else ""
        self._open_query("filter", current, "filter: ~m tools/call & !~s complete   (? for help)")

    def action_search(self) -> None:
        self._open_query("search", self.search_text, "search method, name, id")

    def action_search_next(self) -> None:
        self.search(1)

    def action_search_previous(self) -> None:
        self.search(-1)

    def search(self, step: int, *, from_current: bool = False) -> None:
        """Move to the next row (``step`` 1) or previous (-1) whose method, name or id
        has the text. In a worker: typing into the search box must stay fluid over a
        million rows (each keystroke cancels the previous search)."""
        needle = self.search_text.lower()
        flow_list = self.flow_list
        if not needle or self.current is None or not flow_list.rows:
            return
        start = flow_list.cursor if from_current else flow_list.cursor + step
        self._search(self.current.model.items, flow_list.rows, needle, start, step)

    @work(thread=True, exclusive=True, group="search")
    def _search(
        self, items: list[FlowItem], rows: array[int], needle: str, start: int, step: int
    ) -> None:
        worker = get_current_worker()
        count = len(rows)
        for offset in range(count):
            if offset % 20_000 == 0 and worker.is_cancelled:
                return
            row = (start + offset * step) % count
            flow = items[rows[row] >> SUB_BITS].flow
            if (
                needle in (flow.method or "").lower()
                or needle in (flow.name or "").lower()
                or any(needle in str(i).lower() for i in flow.ids)
            ):
                self.call_from_thread(self.flow_list.move_to_row, row)
                return
        message = f"no flow matches {self.search_text!r}"
        self.call_from_thread(self.notify, message, severity="warning")

    # -- filtering --------------------------------------------------------------------------
    def set_filter(self, text: str) -> bool:
        """Apply ``text`` as the current capture's filter; ``False`` if it does not parse
        (the error is shown)."""
        view = self.current
        if view is None:
            return True
        try:
            flt = compile_filter(text) if text.strip() else None
        except FilterError as exc:
            self.notify(str(exc), title="filter", severity="error", timeout=8)
            return False
        view.filter = flt
        view.cursor_item = self.flow_list.current_item_index
        view.stick = self.flow_list.follow
        view.changed_meanwhile = set()
        self.refilter(view)
        return True

    @work(thread=True, exclusive=True, group="filter")
    def refilter(self, view: SessionView) -> None:
        started = time.perf_counter()
        count = len(view.model.items)
        flt = view.filter
        items = view.model.items[:count]
        matches = filter_rows(flt, items) if flt else array("I", range(count))
        elapsed = time.perf_counter() - started
        if not get_current_worker().is_cancelled:
            self.call_from_thread(self._filtered, view, matches, count, elapsed)

    def _filtered(self, view: SessionView, matches: array[int], count: int, elapsed: float) -> None:
        view.matches = matches
        view.checked = count
        meanwhile, view.changed_meanwhile = view.changed_meanwhile, None
        if meanwhile:
            view.refilter(meanwhile)
        if view is self.current:
            view.cursor_item = self.flow_list.current_item_index
            view.stick = self.flow_list.follow
            self.show_view(view)
            self.apply_changes(view)
            if view.filter is not None:
                self.notify(f"{len(matches)} of {count} flows match ({elapsed * 1000:.0f} ms)")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id != "query":
            return
        if self.query_mode == "filter":
            if not self.set_filter(event.value):
                event.input.add_class("-invalid")  # the text stays, to be corrected
                return
        elif self.query_mode == "search":
            self.search_text = event.value
        self.close_query()

    def on_input_changed(self, event: Input.Changed) -> None:
        event.input.remove_class("-invalid")
        if event.input.id == "query" and self.query_mode == "search":
            self.search_text = event.value
            self.search(1, from_current=True)

    def close_query(self) -> None:
        query = self.query_input
        query.display = False
        query.remove_class("-invalid")
        self.remove_class("-query-open")
        self.query_mode = ""
        self.flow_list.focus()
