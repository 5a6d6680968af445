"""What the keys do around the detail pane, the filter input and quitting."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Input

from mcpeek.tui.app import McpeekApp
from mcpeek.tui.flow_list import FlowList
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
