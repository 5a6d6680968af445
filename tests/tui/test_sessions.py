"""Several captures in one viewer: each tab draws its own rows; new live captures."""

from __future__ import annotations

from pathlib import Path

from mcpeek.tui.app import McpeekApp
from mcpeek.tui.display_rows import SUB_BITS
from mcpeek.tui.flow_list import FlowList
from tests.tui.conftest import busy_capture, wait_for, wait_loaded

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


def watching(directory: Path) -> McpeekApp:
    app = McpeekApp([], directory=directory, recheck_rules=False)
    app.directory_poll = 0.1
    return app


async def test_waits_for_the_capture_directory_and_creates_nothing(tmp_path: Path) -> None:
    directory = tmp_path / "captures"
    app = watching(directory)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause(0.3)
        flows = app.query_one(FlowList)
        assert "waiting for captures" in flows.render_line(0).text
        assert str(directory) in str(app.status_bar.render())
        assert not directory.exists()
        directory.mkdir()
        first = busy_capture(directory / "1.jsonl", calls=2)
        await wait_for(pilot, lambda: len(flows.rows) == 6)
        assert app.current is not None and app.current.model.path == first


async def test_a_new_capture_is_shown_first_when_the_user_is_not_busy(tmp_path: Path) -> None:
    busy_capture(tmp_path / "1.jsonl", calls=2)
    app = watching(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.current is not None)
        new = busy_capture(tmp_path / "2.jsonl", calls=1)
        await wait_for(pilot, lambda: len(app.views) == 2)
        assert app.current is app.views[0] and app.views[0].model.path == new
        assert app.tabs.active == app.views[0].tab_id
        assert app.query_one("#sessions").query("Tab").first().id == app.views[0].tab_id


async def test_a_new_capture_waits_for_a_key_while_the_user_is_busy(tmp_path: Path) -> None:
    old = busy_capture(tmp_path / "1.jsonl", calls=2)
    app = watching(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.current is not None)
        await wait_loaded(pilot, app)
        await pilot.press("enter")  # reading a flow's detail
        new = busy_capture(tmp_path / "2.jsonl", calls=1)
        await wait_for(pilot, lambda: len(app.views) == 2)
        assert app.current is not None and app.current.model.path == old
        assert app.detail.display
        assert any("press L" in str(n.message) for n in app._notifications)
        await pilot.press("escape", "L")
        assert app.current.model.path == new


async def test_quick_presses_of_the_session_keys_each_count() -> None:
    captures = sorted((ROOT / "captures").glob("*.jsonl"))
    app = McpeekApp(captures, follow=False, recheck_rules=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot, app)
        for _ in range(3):  # keys read in one go: handled before the tab bar reports back
            await app.run_action("next_session")
        await pilot.pause()
        assert app.current is app.views[3]
        await app.run_action("previous_session")
        await app.run_action("previous_session")
        await pilot.pause()
        assert app.current is app.views[1] and app.tabs.active == app.views[1].tab_id
