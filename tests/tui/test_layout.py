"""The flow list's columns: sized to their content, titles above their cells,
and the screen's furniture (toasts, footer, progress bar) where it belongs."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets._footer import FooterKey
from textual.widgets._toast import Toast

from mcpeek.inspector.capture.reader import CaptureReader
from mcpeek.inspector.testing.records import RecordBuilder
from mcpeek.inspector.views.session import FlowItem, SessionModel
from mcpeek.tui.app import McpeekApp
from mcpeek.tui.flow_list import FlowList
from mcpeek.tui.render import ids_text, latency_text
from mcpeek.tui.rows import Columns, column_header, fit, flow_row
from tests.tui.conftest import wait_for, wait_loaded
from tests.tui.test_app import shown_text

CAPTURES = sorted((Path(__file__).resolve().parents[2] / "captures").glob("*.jsonl"))
WIDTHS = (80, 120, 160)


def loaded(path: Path) -> list[FlowItem]:
    model = SessionModel(path)
    model.feed(CaptureReader(path).records())
    model.finish()
    return model.items


def cells(item: FlowItem) -> dict[str, str]:
    flow = item.flow
    return {
        "#": str(flow.number),
        "id": ids_text(flow.ids),
        "status": flow.status + ("*" if flow.late else ""),
        "latency": latency_text(flow.latency_ms),
        "prog": f"{flow.progress_count}p" if flow.progress_count else "",
    }


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("capture", CAPTURES, ids=lambda p: p.name)
def test_each_title_sits_above_its_cells(capture: Path, width: int) -> None:
    items = loaded(capture)
    layout = fit(Columns().widen(items), width)
    header = column_header(layout).plain
    assert len(header) <= width
    for item in items:
        row = flow_row(item, layout).plain
        assert len(row) <= width
        method_at = header.index("method")
        shown = row[method_at : method_at + layout.label].rstrip().lstrip("▸ ")
        method = item.flow.method or "(no method)"
        assert method.startswith(shown[:-1]) if shown.endswith("…") else shown.startswith(method)
        status_at = header.index("status")
        assert row[status_at:].startswith(cells(item)["status"])
        for title in ("#", "id", "latency", "prog"):  # right-aligned under their title
            end = header.index(f" {title}" if title != "#" else title) + len(title)
            end += title != "#"
            cell = cells(item)[title]
            assert row[end - len(cell) : end] == cell, (title, row)
            assert row[end : end + 1] in ("", " ")


def test_the_method_column_is_as_wide_as_its_widest_cell_on_a_wide_screen() -> None:
    items = [item for capture in CAPTURES for item in loaded(capture)]
    layout = fit(Columns().widen(items), 160)
    widest = max(len(f"{i.flow.method} {i.flow.name or ''}".strip()) for i in items)
    assert layout.label <= widest + 2  # (a chain's ▸)
    header = column_header(layout).plain
    assert len(header.rstrip()) < 160 - 40  # the last columns are not pushed to the edge


def test_measuring_a_flow_matches_its_cells() -> None:
    for capture in CAPTURES:
        items = loaded(capture)
        columns = Columns().widen(items)
        for title, width in (("#", columns.number), ("id", columns.ids)):
            assert width == max([len(title)] + [len(cells(i)[title]) for i in items])
        for title, width in (("status", columns.status), ("latency", columns.latency)):
            assert width == max([len(title)] + [len(cells(i)[title]) for i in items])
        assert columns.progress == max([4] + [len(cells(i)["prog"]) for i in items])


async def test_toasts_leave_the_status_line_and_the_footer_keeps_save_and_quit() -> None:
    app = McpeekApp([CAPTURES[0]], follow=False, recheck_rules=False)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await wait_loaded(pilot, app)
        await pilot.press("home", "enter", "c")  # the detail open (more keys), a toast
        await wait_for(pilot, lambda: bool(app.screen.query(Toast)))
        status = app.status_bar.region
        for toast in app.screen.query(Toast):
            assert not toast.region.overlaps(status)
        keys = {key.key: key.region for key in app.screen.query(FooterKey)}
        assert keys["w"].right <= 80 and keys["q"].right <= 80
        assert "right" in keys
        await pilot.press("escape", "f", *"~x", "enter")  # an error while the input is open
        await wait_for(pilot, lambda: any(t.has_class("-error") for t in app.screen.query(Toast)))
        await pilot.pause()
        for toast in app.screen.query(Toast):
            assert not toast.region.overlaps(status)
            assert not toast.region.overlaps(app.query_input.region)


async def test_the_progress_bar_stands_apart_from_the_notifications() -> None:
    modern = next(p for p in CAPTURES if p.name == "modern-stdio.jsonl")
    app = McpeekApp([modern], follow=False, recheck_rules=False)
    async with app.run_test(size=(120, 34)) as pilot:
        await wait_loaded(pilot, app)
        await pilot.press("home", "down", "down", "down", "enter")  # tools/call count
        lines = shown_text(app, "#body-notifications").splitlines()
        assert "━" in lines[0] and lines[1].strip() == ""
        assert "notifications/progress" in lines[2]


async def test_a_big_load_still_fits_the_rows_on_screen(tmp_path: Path) -> None:
    b = RecordBuilder()
    count = 12_000  # more than one update measures at once
    for n in range(1, count + 1):
        name = "a_tool_with_a_rather_long_name_at_the_end" if n == count else "add"
        b.request("tools/call", {"name": name}, id=n)
        b.result(n, {"content": []})
    b.event("exit", code=0)
    app = McpeekApp([b.save(tmp_path / "big.jsonl")], follow=False, recheck_rules=False)
    async with app.run_test(size=(160, 30)) as pilot:
        await wait_loaded(pilot, app)
        flows = app.query_one(FlowList)
        await pilot.press("end")
        await pilot.pause()
        last = flows.render_line(flows.cursor - flows.scroll_offset.y).text
        assert "tools/call a_tool_with_a_rather_long_name_at_the_end " in last
        header = app.column_header.render().plain
        assert last.rindex(" 12000 ") + len(" 12000") == header.index(" id ") + len(" id")
