"""The flow list's rows as rendered strips: how a display row is drawn, and cached.

The list (:mod:`mcpeek.tui.flow_list`) decides which rows are on screen; this
module turns one display row (:mod:`mcpeek.tui.display_rows`) into a
:class:`~textual.strip.Strip`.

Strips are cached by everything a row's look depends on: the session (row
codes of two captures are alike), the row, its flow's version, the layout
(width, column sizes), the style (cursor, focus, theme), whether it is
expanded, and, for a request in flight on a live capture, its running timer
(whole seconds, slow or not). A key changes whenever what the row shows does,
so the cache is never cleared; and a clock tick redraws only the rows in
flight, the rest come from the cache.
"""

from __future__ import annotations

from array import array

from rich.console import Console
from rich.segment import Segment
from rich.style import Style
from textual.cache import LRUCache
from textual.strip import Strip

from mcpeek.inspector.analysis import Flow
from mcpeek.inspector.views.in_flight import DEFAULT_SLOW
from mcpeek.inspector.views.session import SessionModel
from mcpeek.tui.display_rows import SUB_BITS, SUB_MASK
from mcpeek.tui.rows import Layout, Timer, attempt_row, flow_row

CACHED_ROWS = 1024


class RowStrips:
    """Draws display rows, from the cache when the row looks as it did."""

    def __init__(self) -> None:
        self._cache: LRUCache[tuple[object, ...], Strip] = LRUCache(CACHED_ROWS)
        self.now: float | None = None  # a live capture's clock reading; None: no timers
        self.slow = DEFAULT_SLOW  # seconds in flight after which a request is slow

    def timer(self, flow: Flow) -> Timer | None:
        """The running timer of ``flow``: only a request in flight, on a live capture."""
        now = self.now
        if now is None or flow.status != "pending":
            return None
        elapsed = now - flow.started
        return Timer(int(elapsed), elapsed >= self.slow)

    def strip(
        self,
        model: SessionModel,
        code: int,
        layout: Layout,
        base: Style,
        expanded: bool,
        console: Console,
    ) -> Strip:
        """Display row ``code`` of ``model``, ``layout.width`` cells wide."""
        item = model.items[code >> SUB_BITS]
        sub = code & SUB_MASK
        timer = None if sub else self.timer(item.flow)
        key = (model, code, item.version, layout, base, expanded, timer)
        strip = self._cache.get(key)
        if strip is None:
            if sub:
                text = attempt_row(item.flow, sub - 1, layout)
            else:
                text = flow_row(item, layout, expanded=expanded, timer=timer)
            segments = list(Segment.apply_style(text.render(console), base))
            strip = Strip(segments).extend_cell_length(layout.width, base).crop(0, layout.width)
            self._cache[key] = strip
        return strip


def in_flight_rows(model: SessionModel, rows: array[int], top: int, height: int) -> set[int]:
    """The display rows from ``top`` (``height`` of them) whose request is in flight:
    those a clock tick draws again."""
    items = model.items
    return {
        top + y
        for y, code in enumerate(rows[top : top + height])
        if not code & SUB_MASK and items[code >> SUB_BITS].flow.status == "pending"
    }
