"""The flow list: one line per flow, virtualised with Textual's Line API.

The widget never holds a widget per row. It holds an ``array`` of display
rows (an item index shifted left by ``SUB_BITS``, plus the attempt number of
an expanded MRTR chain's sub-row) and renders only the lines on screen in
:meth:`FlowList.render_line`, through a small cache of rendered strips
(:mod:`mcpeek.tui.row_strips`), so a million flows scroll as smoothly as ten.

A request in flight on a live capture shows a running timer in its latency
cell, conspicuous past ``--slow``: the app calls :meth:`FlowList.tick` with
its clock, which redraws the in-flight rows on screen and nothing else.

Follow mode keeps the cursor on the newest flow while rows arrive; moving
the cursor up turns it off, going to the end turns it back on.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable

from rich.text import Text
from textual.binding import Binding
from textual.events import Click
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from mcpeek.inspector.views.session import FlowItem, SessionModel
from mcpeek.tui import display_rows
from mcpeek.tui.display_rows import SUB_BITS, SUB_MASK
from mcpeek.tui.row_strips import RowStrips, in_flight_rows
from mcpeek.tui.rows import Columns, Layout, fit


class FlowList(ScrollView, can_focus=True):
    """Rows of one session's (filtered) flows."""

    BINDINGS = [
        Binding("up,k", "cursor(-1)", "Up", show=False),
        Binding("down,j", "cursor(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("home,g", "first", "First", show=False),
        Binding("end,G", "last", "Last (follow)", show=False),
        Binding("enter", "select", "Open", show=False),
        Binding("space", "toggle_expand", "Expand chain", show=False),
    ]
    COMPONENT_CLASSES = {"flow-list--cursor"}
    DEFAULT_CSS = """
    FlowList { height: 1fr; overflow-x: hidden; }
    FlowList > .flow-list--cursor { background: $accent 40%; }
    FlowList:focus > .flow-list--cursor { background: $accent; }
    """

    follow: reactive[bool] = reactive(True)

    class Highlighted(Message):
        def __init__(self, item: FlowItem | None) -> None:
            super().__init__()
            self.item = item

    class ColumnsChanged(Message):
        """A column widened: the header above must follow."""

    class Selected(Message):
        def __init__(self, item: FlowItem) -> None:
            super().__init__()
            self.item = item

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.model: SessionModel | None = None
        self.matches = array("I")  # item indexes the filter lets through, ascending
        self.rows = array("Q")  # display rows (see module docstring)
        self.expanded: set[int] = set()  # item indexes of opened MRTR chains
        self.cursor = 0
        self.placeholder = Text()  # shown while there is no session (waiting for captures)
        self.columns = Columns()  # the session's widest cells (the app keeps them per capture)
        self.strips = RowStrips()  # draws rows, cached; holds the clock of the timers
        self._timed: set[int] = set()  # rows drawn with a timer at the last tick

    # -- data --------------------------------------------------------------------
    def show(
        self,
        model: SessionModel | None,
        matches: array[int],
        cursor_item: int | None,
        expanded: set[int] | None = None,
        columns: Columns | None = None,
    ) -> None:
        """Show ``matches`` (item indexes) of ``model``; keep the cursor on ``cursor_item``.
        ``matches``, ``expanded`` and ``columns`` are the caller's: each capture keeps its
        own (``columns`` grows here: the caller takes it back with the cursor)."""
        self.model = model
        self.matches = matches
        self.expanded = expanded if expanded is not None else set()
        self._set_columns(columns or Columns())
        self._rebuild()
        if self.follow or cursor_item is None:
            self.cursor = max(len(self.rows) - 1, 0) if self.follow else 0
        else:
            self.cursor = self._row_of_item(cursor_item)
        self._changed(scroll=True)

    def extend(self, new_matches: array[int]) -> None:
        """Rows appended at the end (live traffic); follow mode moves along."""
        if not new_matches:
            return
        self.matches.extend(new_matches)
        self.rows.extend(i << SUB_BITS for i in new_matches)
        if self.follow:
            self.cursor = len(self.rows) - 1
        self._changed(scroll=self.follow)

    def patch(self, entered: list[int], left: list[int]) -> None:
        """Items that entered or left :attr:`matches` (already edited there): the same
        edit on the display rows, the cursor kept on its flow."""
        current = self.current_item_index
        display_rows.patch(self.rows, entered, left, self._rows_of)
        if self.follow:
            self.cursor = max(len(self.rows) - 1, 0)
        elif current is not None:
            self.cursor = self._row_of_item(current)
        self._changed(scroll=False)

    def _rows_of(self, index: int) -> list[int]:
        attempts = len(self.model.items[index].flow.attempts) if self.model is not None else 1
        return display_rows.rows_of(index, attempts, index in self.expanded)

    def widen(self, item_indexes: Iterable[int]) -> None:
        """Size the columns to fit these rows too."""
        if self.model is not None:
            items = self.model.items
            self._set_columns(self.columns.widen(items[i] for i in item_indexes))

    def _set_columns(self, columns: Columns) -> None:
        if columns != self.columns:
            self.columns = columns
            self.refresh()
            self.post_message(self.ColumnsChanged())

    def row_layout(self) -> Layout:
        return fit(self.columns, self.scrollable_content_region.width)

    def refresh_rows(self) -> None:
        """Some rows' content changed (status, violations): draw again (the
        unchanged ones come from the cache)."""
        self.refresh()

    def _rebuild(self) -> None:
        self.rows = display_rows.build(self.matches, self.expanded, self._rows_of)

    def _row_of_item(self, item_index: int) -> int:
        return display_rows.row_of_item(self.rows, item_index)

    def _changed(self, *, scroll: bool) -> None:
        self.virtual_size = Size(0, len(self.rows))  # rows fit the width: no sideways scroll
        if scroll:
            self.call_after_refresh(self._scroll_to_cursor)
        self.refresh()
        self.post_message(self.Highlighted(self.current_item))

    @property
    def current_item(self) -> FlowItem | None:
        if self.model is None or not self.rows:
            return None
        index = self.rows[min(self.cursor, len(self.rows) - 1)] >> SUB_BITS
        return self.model.items[index]

    def shown_items(self) -> list[FlowItem]:
        """The flows on the rows, in order (sub-rows of an expanded chain not repeated)."""
        if self.model is None:
            return []
        return [self.model.items[code >> SUB_BITS] for code in self.rows if not code & SUB_MASK]

    @property
    def current_item_index(self) -> int | None:
        if not self.rows:
            return None
        return self.rows[min(self.cursor, len(self.rows) - 1)] >> SUB_BITS

    # -- drawing -------------------------------------------------------------------
    def render_lines(self, crop: Region) -> list[Strip]:
        # The rows on screen are measured first (the app measures every row only while
        # updates are small: a million rows loading at once are not), so one frame's
        # rows share one layout.
        top = self.scroll_offset.y
        shown = self.rows[top : top + self.scrollable_content_region.height]
        self.widen(sorted({code >> SUB_BITS for code in shown}))
        return super().render_lines(crop)

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        row = scroll_y + y
        width = self.scrollable_content_region.width
        if self.model is None and row == 0:
            text = self.placeholder.copy()
            text.stylize("italic")
            text.truncate(width, overflow="ellipsis")
            return Strip(text.render(self.app.console)).extend_cell_length(width)
        if row >= len(self.rows) or self.model is None:
            return Strip.blank(width, self.rich_style)
        code = self.rows[row]
        base = self.rich_style
        if row == self.cursor:
            base = base + self.get_component_rich_style("flow-list--cursor")
        expanded = code >> SUB_BITS in self.expanded
        strip = self.strips.strip(
            self.model, code, self.row_layout(), base, expanded, self.app.console
        )
        return strip.crop(scroll_x, scroll_x + width)

    def tick(self, now: float | None) -> None:
        """The clock moved (``None``: the capture is not live, no timers): draw
        again the rows on screen whose request is in flight, and those that were
        at the last tick (one that expired meanwhile loses its timer), only those."""
        was = self.strips.now
        self.strips.now = now
        if self.model is None:
            return
        if (was is None) != (now is None):
            self.refresh()  # timers appear or go away
            return
        height = self.scrollable_content_region.height
        timed = in_flight_rows(self.model, self.rows, self.scroll_offset.y, height)
        for row in timed | self._timed:
            self.refresh_line(row)
        self._timed = timed

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # rows fit the width: ← → are the app's (the detail's tabs)
        return action not in ("scroll_left", "scroll_right", "page_left", "page_right")

    # -- moving ----------------------------------------------------------------------
    def _move_to(self, row: int) -> None:
        if not self.rows:
            return
        self.cursor = max(0, min(row, len(self.rows) - 1))
        self.follow = self.cursor == len(self.rows) - 1  # at the newest row: stick to it
        self._scroll_to_cursor()
        self.refresh()
        self.post_message(self.Highlighted(self.current_item))

    def _scroll_to_cursor(self) -> None:
        height = self.scrollable_content_region.height or 1
        top = self.scroll_offset.y
        if self.cursor < top:
            self.scroll_to(y=self.cursor, animate=False)
        elif self.cursor >= top + height:
            self.scroll_to(y=self.cursor - height + 1, animate=False)

    def move_to_row(self, row: int) -> None:
        self._move_to(row)

    def move_to_item(self, item_index: int) -> None:
        self._move_to(self._row_of_item(item_index))

    def action_cursor(self, delta: int) -> None:
        self._move_to(self.cursor + delta)

    def action_page(self, direction: int) -> None:
        self._move_to(self.cursor + direction * max(self.scrollable_content_region.height - 1, 1))

    def action_first(self) -> None:
        self._move_to(0)

    def action_last(self) -> None:
        self._move_to(len(self.rows) - 1)

    def action_select(self) -> None:
        item = self.current_item
        if item is not None:
            self.post_message(self.Selected(item))

    def action_toggle_expand(self) -> None:
        index = self.current_item_index
        if index is None or self.model is None:
            return
        if len(self.model.items[index].flow.attempts) < 2:
            return
        self.expanded.symmetric_difference_update({index})
        self._rebuild()
        self.cursor = self._row_of_item(index)
        self._changed(scroll=True)

    def on_click(self, event: Click) -> None:
        row = self.scroll_offset.y + event.y
        if row < len(self.rows):
            if row == self.cursor and event.chain >= 2:
                self.action_select()
            self._move_to(row)

    def watch_follow(self, follow: bool) -> None:
        self.post_message(self.Highlighted(self.current_item))
