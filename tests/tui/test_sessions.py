"""Several captures in one viewer: each tab draws its own rows; new live captures."""

from __future__ import annotations

from pathlib import Path

from mcpeek.tui.app import McpeekApp
from mcpeek.tui.flow_list import SUB_BITS, FlowList
from tests.tui.conftest import busy_capture, wait_loaded

SIZE = (120, 36)
ROOT = Path(__file__).resolve().parents[2]


def drawn_methods(flows: FlowList) -> list[tuple[str, str]]:
    """Per row on screen: the text drawn, and the method of the flow the row stands for."""
    assert flows.model is not None
    top = flows.scroll_offset.y
    shown = []
    for y in range(min(len(flows.rows) - top, flows.scrollable_content_region.height)):
        item = flows.model.items[flows.rows[top + y] >> SUB_BITS]
        shown.append((flows.render_line(y).text, item.flow.method or "(no method)"))
    return shown


async def test_each_tab_draws_its_own_rows_whatever_the_others_drew() -> None:
    captures = sorted((ROOT / "captures").glob("*.jsonl"))
    app = McpeekApp(captures, follow=False, recheck_rules=False)
    async with app.run_test(size=SIZE) as pilot:
        for _ in app.views:
            await pilot.press("right_square_bracket")
            await wait_loaded(pilot, app)
        await pilot.press("right_square_bracket")  # back on the first: every tab was drawn
        for _ in app.views:
            await pilot.press("right_square_bracket", "home", "down")
            await pilot.pause()
            flows = app.query_one(FlowList)
            for text, method in drawn_methods(flows):
                assert method in text


async def test_the_cursor_row_is_drawn_again_when_the_list_loses_focus(tmp_path: Path) -> None:
    app = McpeekApp([busy_capture(tmp_path / "c.jsonl", calls=3)], recheck_rules=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot, app)
        flows = app.query_one(FlowList)
        y = flows.cursor - flows.scroll_offset.y
        focused = flows.render_line(y)
        await pilot.press("f")  # the filter input takes the focus
        assert flows.render_line(y) != focused  # the cursor shows that the list is not focused
