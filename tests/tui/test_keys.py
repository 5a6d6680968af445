"""What the keys do around the detail pane, the filter input and quitting."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Input, TabbedContent, Tree
from textual.widgets._footer import FooterKey

from mcpeek.tui.app import McpeekApp
from mcpeek.tui.flow_list import FlowList
from mcpeek.tui.screens import QuitScreen
from tests.tui.conftest import busy_capture, wait_for, wait_loaded

SIZE = (120, 36)


def viewer(path: Path, **kwargs: object) -> McpeekApp:
    return McpeekApp([path], follow=False, recheck_rules=False, **kwargs)  # type: ignore[arg-type]


async def test_a_filter_that_does_not_parse_stays_in_the_input_to_be_corrected(
    tmp_path: Path,
) -> None:
    app = viewer(busy_capture(tmp_path / "c.jsonl"))
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot, app)
        await pilot.press("f", *"~m tools/call & ~x oops", "enter")
        query = app.query_one("#query", Input)
        assert query.display and query.has_focus and query.value == "~m tools/call & ~x oops"
        assert query.has_class("-invalid")
        assert any(n.severity == "error" for n in app._notifications)
        await pilot.press(*["backspace"] * len("& ~x oops"), "enter")  # corrected
        flows = app.query_one(FlowList)
        await wait_for(pilot, lambda: app.views[0].filter is not None)
        assert not query.display and not query.has_class("-invalid")
        assert app.views[0].filter is not None
        assert app.views[0].filter.text.strip() == "~m tools/call"
        calls = [i for i in app.views[0].model.items if i.flow.method == "tools/call"]
        await wait_for(pilot, lambda: len(flows.rows) == len(calls))


async def test_q_backs_out_of_the_detail_before_it_quits(tmp_path: Path) -> None:
    app = viewer(busy_capture(tmp_path / "c.jsonl"))
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot, app)
        await pilot.press("enter", "tab")  # the detail open, its tabs focused
        assert app.detail.display
        await pilot.press("q")
        assert not app.detail.display and app.query_one(FlowList).has_focus
        assert app.is_running
        await pilot.press("q")
        await pilot.pause()
        assert not app.is_running  # nothing runs behind this viewer: no question


async def test_quitting_a_viewer_that_runs_a_proxy_asks_first(tmp_path: Path) -> None:
    app = viewer(busy_capture(tmp_path / "c.jsonl"), runs_proxy=True)
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot, app)
        await pilot.press("q")
        assert isinstance(app.screen, QuitScreen)
        await pilot.press("n")
        assert not isinstance(app.screen, QuitScreen) and app.is_running
        await pilot.press("ctrl+c")
        assert isinstance(app.screen, QuitScreen)
        await pilot.press("y")
        await pilot.pause()
        assert not app.is_running


async def test_ctrl_c_quits_and_twice_quits_past_the_question(tmp_path: Path) -> None:
    plain = viewer(busy_capture(tmp_path / "c.jsonl"))
    async with plain.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot, plain)
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert not plain.is_running
        assert not any("ctrl+q" in str(n.message) for n in plain._notifications)
    proxied = viewer(tmp_path / "c.jsonl", runs_proxy=True)
    async with proxied.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot, proxied)
        await pilot.press("ctrl+c", "ctrl+c")
        await pilot.pause()
        assert not proxied.is_running


def footer_keys(app: McpeekApp) -> set[str]:
    return {key.key for key in app.screen.query(FooterKey)}


async def test_the_arrows_switch_the_detail_tabs_and_the_footer_says_so(tmp_path: Path) -> None:
    app = viewer(busy_capture(tmp_path / "c.jsonl"))
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot, app)
        tabs = app.detail.query_one(TabbedContent)
        assert "right" not in footer_keys(app)
        await pilot.press("enter")
        await pilot.pause()
        assert {"left", "right"} <= footer_keys(app)
        assert tabs.active == "tab-request"
        await pilot.press("right", "right")
        assert tabs.active == "tab-raw" and app.query_one(FlowList).has_focus
        await pilot.press("left", "left", "left")
        assert tabs.active == "tab-violations"  # round the end
        await pilot.press("escape")
        await pilot.pause()
        assert "right" not in footer_keys(app)


async def test_a_violation_opens_the_violations_tab_of_its_flow(tmp_path: Path) -> None:
    app = viewer(busy_capture(tmp_path / "c.jsonl"))
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot, app)
        await pilot.press("home", "v")
        tree = app.screen.query_one(Tree)
        leaf = tree.root.children[0].children[0]
        tree.select_node(leaf)
        await pilot.pause()
        flagged = app.query_one(FlowList).current_item
        assert flagged is not None and flagged.findings
        assert str(leaf.label).startswith(f"flow {flagged.flow.number}:")
        assert app.detail.display and app.detail.item is flagged
        assert app.detail.query_one(TabbedContent).active == "tab-violations"
