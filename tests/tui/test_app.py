"""The viewer driven by Textual's Pilot: open, navigate, filter, detail, screens, save."""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console
from textual.widgets import Static

from mcpeek import inspector
from mcpeek.tui.app import McpeekApp
from mcpeek.tui.detail import DetailPane
from mcpeek.tui.flow_list import FlowList
from mcpeek.tui.screens import HelpScreen, SummaryScreen, ViolationsScreen
from tests.tui.conftest import busy_capture, wait_for, wait_loaded

SIZE = (120, 36)


def shown_text(app: McpeekApp, selector: str) -> str:
    """What a Static of the detail pane shows, as plain text."""
    console = Console(width=120, record=True, file=io.StringIO())
    console.print(app.query_one(selector, Static).content)
    return console.export_text()


def viewer(*paths: Path, **kwargs: object) -> McpeekApp:
    kwargs.setdefault("recheck_rules", False)
    return McpeekApp(list(paths), **kwargs)  # type: ignore[arg-type]


async def test_opens_a_capture_and_moves_the_cursor(tmp_path: Path) -> None:
    app = viewer(busy_capture(tmp_path / "c.jsonl"))
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot, app)
        flows = app.query_one(FlowList)
        assert len(flows.rows) == 124
        assert flows.cursor == 123 and flows.follow  # a new capture shows its newest flow
        await pilot.press("up")
        assert flows.cursor == 122 and not flows.follow
        await pilot.press("home")
        assert flows.cursor == 0 and flows.current_item is not None
        assert flows.current_item.flow.method == "server/discover"
        await pilot.press("down", "down")
        assert flows.current_item.flow.ids == [2]
        await pilot.press("pagedown")
        assert flows.cursor > 20
        await pilot.press("end")
        assert flows.cursor == 123 and flows.follow


async def test_an_mrtr_chain_is_one_row_that_expands(tmp_path: Path) -> None:
    app = viewer(busy_capture(tmp_path / "c.jsonl"))
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot, app)
        flows = app.query_one(FlowList)
        chain = next(i for i, item in enumerate(app.views[0].model.items) if item.flow.chain)
        flows.move_to_item(chain)
        await pilot.press("space")
        assert len(flows.rows) == 126  # two attempt rows under the chain
        await pilot.press("down")
        assert flows.current_item_index == chain  # a sub-row belongs to its flow
        await pilot.press("up", "space")
        assert len(flows.rows) == 124


async def test_filter_narrows_the_rows_and_a_bad_filter_says_why(tmp_path: Path) -> None:
    app = viewer(busy_capture(tmp_path / "c.jsonl"))
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot, app)
        flows = app.query_one(FlowList)
        await pilot.press("f", *"~m tools/call & ~s error", "enter")
        await wait_for(pilot, lambda: len(flows.rows) == 12)
        assert {item.flow.status for item in flows.shown_items()} == {"error"}
        await pilot.press("f", "ctrl+u", *"~x nonsense", "enter")
        await pilot.pause()
        assert len(flows.rows) == 12  # unchanged
        assert any("unknown" in n.message for n in app._notifications)
        await pilot.press("f", "ctrl+u", "enter")  # empty: everything again
        await wait_for(pilot, lambda: len(flows.rows) == 124)


async def test_detail_shows_the_flow_in_tabs(tmp_path: Path) -> None:
    app = viewer(busy_capture(tmp_path / "c.jsonl"))
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot, app)
        await pilot.press("home", "down", "down", "enter")  # tools/call count, id 2
        detail = app.query_one(DetailPane)
        assert detail.display and detail.item is not None
        assert detail.item.flow.name == "count"
        assert '"name": "count"' in shown_text(app, "#body-request")
        assert '"text": "answer 2"' in shown_text(app, "#body-response")
        assert "whole call" in shown_text(app, "#body-timing")
        notes = shown_text(app, "#body-notifications")
        assert notes.count("notifications/progress") == 2 and "2/2" in notes
        assert shown_text(app, "#body-raw").count('"jsonrpc":"2.0"') == 4
        await pilot.press("escape")
        assert not detail.display


async def test_violations_screen_groups_by_rule_and_jumps(tmp_path: Path) -> None:
    app = viewer(busy_capture(tmp_path / "c.jsonl"))
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot, app)
        model = app.views[0].model
        assert [f.rule for f in model.findings] == ["response.unknown-id"]
        flows = app.query_one(FlowList)
        await pilot.press("home", "v")
        assert isinstance(app.screen, ViolationsScreen)
        await pilot.press("down", "down", "enter")  # the rule (open: it is alone), its finding
        await wait_for(pilot, lambda: not isinstance(app.screen, ViolationsScreen))
        item = flows.current_item
        assert item is not None and item.flow.status == "orphan" and item.worst == "error"
        assert app.query_one(DetailPane).display


async def test_summary_help_and_palette(tmp_path: Path) -> None:
    app = viewer(busy_capture(tmp_path / "c.jsonl"))
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot, app)
        await pilot.press("s")
        assert isinstance(app.screen, SummaryScreen)
        await pilot.press("escape", "question_mark")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape", "ctrl+p", *"violations")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ViolationsScreen))


async def test_mark_comment_copy_and_save(tmp_path: Path) -> None:
    app = viewer(busy_capture(tmp_path / "c.jsonl"))
    target = tmp_path / "saved.jsonl"
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot, app)
        flows = app.query_one(FlowList)
        await pilot.press("home", "down", "m", "down", "m", "semicolon", *"look", "enter")
        items = app.views[0].model.items
        assert [i for i, item in enumerate(items) if item.marked] == [1, 2]
        assert items[2].comment == "look"
        await pilot.press("c")
        assert '"tools/call"' in app.clipboard and '"count"' in app.clipboard
        await pilot.press("f", *"~mark", "enter")
        await wait_for(pilot, lambda: len(flows.rows) == 2)
        await pilot.press("w", "ctrl+u", *str(target), "enter")
        await wait_for(pilot, lambda: any("saved" in n.message for n in app._notifications))
    saved = inspector.load(target)
    assert [f.ids for f in saved.flows] == [[1], [2]]
    assert saved.flows[1].progress_count == 2
    assert target.stat().st_mode & 0o777 == 0o600  # a capture like any other: private


async def test_save_never_replaces_a_file_that_holds_data(tmp_path: Path) -> None:
    source = busy_capture(tmp_path / "c.jsonl")
    before = source.read_bytes()
    app = viewer(source)
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot, app)
        # Onto the very capture on screen (it could be a live one): refused, kept.
        await pilot.press("w", "ctrl+u", *str(source), "enter")
        await wait_for(pilot, lambda: any("cannot save" in n.message for n in app._notifications))
    assert source.read_bytes() == before
    assert any("already exists" in n.message for n in app._notifications)


async def test_a_broken_file_opens_with_a_notice(tmp_path: Path) -> None:
    path = busy_capture(tmp_path / "c.jsonl")
    data = path.read_bytes()
    lines = data.split(b"\n")
    lines.insert(5, b"this is not json")
    path.write_bytes(b"\n".join(lines)[:-40])  # and a torn last line
    app = viewer(path, follow=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot, app)
        assert len(app.query_one(FlowList).rows) > 100
        assert any("problem" in n.message for n in app._notifications)


async def test_not_a_capture_is_an_error_not_a_crash(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text("hello\n")
    app = viewer(path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot, app)
        assert app.views[0].error is not None and "not an mcpeek capture" in app.views[0].error
        assert any("not an mcpeek capture" in n.message for n in app._notifications)


async def test_mouse_click_selects_and_double_click_opens(tmp_path: Path) -> None:
    app = viewer(busy_capture(tmp_path / "c.jsonl"))
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot, app)
        flows = app.query_one(FlowList)
        await pilot.press("home")
        await pilot.click(FlowList, offset=(10, 3))
        assert flows.cursor == 3 and not flows.follow
        await pilot.click(FlowList, offset=(10, 3), times=2)
        assert app.query_one(DetailPane).display


def test_every_declared_action_exists_and_is_bound() -> None:
    """One table feeds keys, footer, help and palette: each entry must be runnable."""
    from mcpeek.tui.actions import ACTIONS

    app = McpeekApp([])
    bound = {binding.action for binding in app.BINDINGS}  # type: ignore[union-attr]
    for spec in ACTIONS:
        assert spec.action in bound
        name = spec.action.partition("(")[0]  # "detail_tab(1)": the method and its argument
        assert callable(getattr(app, f"action_{name}", None)), spec.action
