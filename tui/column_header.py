"""The line of column titles above the flow list."""

from __future__ import annotations

from rich.text import Text
from textual.widget import Widget

from mcpeek.tui.flow_list import FlowList
from mcpeek.tui.rows import column_header


class ColumnHeader(Widget):
    """The column titles, laid out like the rows of ``flow_list`` (the app refreshes
    it when the list's columns widen)."""

    DEFAULT_CSS = "ColumnHeader { height: 1; }"

    def __init__(self, flow_list: FlowList, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.flow_list = flow_list

    def render(self) -> Text:
        return column_header(self.flow_list.row_layout())
