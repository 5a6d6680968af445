"""Each flow status the filters know is drawn in a colour of its own where it matters."""

from __future__ import annotations

from mcpeek.inspector.filters.operators import STATUSES
from mcpeek.tui.render import STATUS_STYLE


def test_every_status_has_a_style() -> None:
    assert set(STATUSES) <= set(STATUS_STYLE)


def test_a_failed_tool_does_not_look_like_a_success_or_a_protocol_error() -> None:
    assert STATUS_STYLE["tool-error"] not in (STATUS_STYLE["complete"], STATUS_STYLE["error"])
