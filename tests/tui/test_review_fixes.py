"""Regression tests for defects a review of the viewer found (each failed before its fix)."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import msgspec

from mcpeek.inspector.records import Msg, Violation
from mcpeek.inspector.testing.records import RecordBuilder
from mcpeek.tui.app import McpeekApp
from mcpeek.tui.detail import DetailPane
from mcpeek.tui.render import MAX_CHARS
from mcpeek.tui.session_view import SessionView
from tests.tui.conftest import busy_capture, wait_for, wait_loaded
from tests.tui.test_app import shown_text

SIZE = (120, 36)


def viewer(*paths: Path, **kwargs: object) -> McpeekApp:
    kwargs.setdefault("recheck_rules", False)
    kwargs.setdefault("follow", False)
    return McpeekApp(list(paths), **kwargs)  # type: ignore[arg-type]


def calls(path: Path, count: int, *, name: str = "p") -> Path:
    b = RecordBuilder()
    for n in range(1, count + 1):
        b.request("tools/call", {"name": f"{name}{n}"}, id=n)
        b.result(n, {"content": []})
    b.event("exit", code=0)
    return b.save(path)


async def test_text_that_looks_like_markup_is_shown_as_it_is(tmp_path: Path) -> None:
    b = RecordBuilder()
    req = b.request("tools/call", {"name": "a"}, id=1)
    b.add(Violation(rule="x.y", severity="error", msgs=[req.seq], message="[/] [b]", spec=""))
    app = viewer(b.save(tmp_path / "c.jsonl"))
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot, app)
        await pilot.press("f", *"~b [/]", "enter")  # a filter with a closing tag: no crash
        await wait_for(pilot, lambda: app.views[0].filter is not None)
        await pilot.pause()
        assert "'~b [/]'" in str(app.status_bar.render())
        await pilot.press("v")
        tree = app.screen.query_one("Tree")
        leaves = [str(leaf.label) for node in tree.root.children for leaf in node.children]
        assert leaves == ["flow 1: [/] [b]"]


async def test_each_capture_keeps_its_cursor_follow_mode_and_open_chains(tmp_path: Path) -> None:
    a = busy_capture(tmp_path / "a.jsonl", calls=30)  # its MRTR chain is item 31
    b = calls(tmp_path / "b.jsonl", 60)
    app = viewer(a, b)
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot, app)
        flows = app.flow_list
        chain = next(i for i, item in enumerate(app.views[0].model.items) if item.flow.chain)
        flows.move_to_item(chain)
        await pilot.press("space", "home", *["down"] * 5)
        assert len(flows.rows) == len(app.views[0].model.items) + 2
        await pilot.press("right_square_bracket")
        await wait_loaded(pilot, app)
        assert len(flows.rows) == 60  # no sub-row from the other capture's open chain
        await pilot.press("end", "left_square_bracket")
        await pilot.pause()
        assert flows.current_item_index == 5 and not flows.follow


async def test_a_live_change_under_a_filter_keeps_the_cursor(tmp_path: Path) -> None:
    b = RecordBuilder()
    for n in range(1, 41):
        b.request("tools/call", {"name": f"t{n}"}, id=n)
        b.result(n, {"content": []})
    path = b.save(tmp_path / "live.jsonl")
    app = viewer(path, follow=True)
    async with app.run_test(size=SIZE) as pilot:
        flows = app.flow_list
        await wait_for(pilot, lambda: len(flows.rows) == 40)
        await pilot.press("f", *"~s complete", "enter")
        await wait_for(pilot, lambda: app.views[0].filter is not None)
        await pilot.press("home", "down", "down")
        encoder = msgspec.json.Encoder()

        def append() -> None:
            with path.open("ab") as out:
                for seq, direction, body in (
                    (81, "c2s", {"jsonrpc": "2.0", "id": 100, "method": "tools/call"}),
                    (82, "s2c", {"jsonrpc": "2.0", "id": 100, "result": {"content": []}}),
                ):
                    raw = encoder.encode(body).decode()
                    record = Msg(seq=seq, t=time.time(), dir=direction, ch="stdio", raw=raw)
                    out.write(encoder.encode(record) + b"\n")
                    out.flush()
                    time.sleep(0.5)

        writer = threading.Thread(target=append)
        writer.start()
        await wait_for(pilot, lambda: len(flows.rows) == 41)  # entered the filter once complete
        writer.join()
        assert flows.current_item_index == 2 and not flows.follow


async def test_marking_reapplies_a_mark_filter(tmp_path: Path) -> None:
    app = viewer(calls(tmp_path / "c.jsonl", 5))
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot, app)
        flows = app.flow_list
        await pilot.press("home", "m", "down", "m", "f", *"~mark", "enter")
        await wait_for(pilot, lambda: len(flows.rows) == 2)
        await pilot.press("home", "m")  # unmarked: no longer shown
        assert [item.flow.name for item in flows.shown_items()] == ["p2"]


def test_a_change_during_a_refilter_is_not_lost(tmp_path: Path) -> None:
    b = RecordBuilder()
    b.request("tools/call", {"name": "done"}, id=1)
    b.result(1, {"content": []})
    b.request("tools/call", {"name": "late"}, id=2)
    view = SessionView(b.save(tmp_path / "c.jsonl"), follow=False, tab_id="s1")
    view.model.feed(b.records)
    from mcpeek.inspector.filters import compile_filter, filter_rows

    view.filter = compile_filter("~s complete")
    view.changed_meanwhile = set()  # a re-filter starts in a worker...
    snapshot = filter_rows(view.filter, view.model.items)  # ...and computes this
    late = RecordBuilder()
    late._seq = b.last.seq
    late.result(2, {"content": []})
    view.model.feed(late.records[1:])  # meanwhile "late" completes
    view.take_rows(view.model.take_changes().changed)
    # the worker's result arrives: what changed meanwhile is looked at again
    view.matches, view.checked = snapshot, len(view.model.items)
    meanwhile, view.changed_meanwhile = view.changed_meanwhile, None
    view.refilter(meanwhile)
    assert list(view.matches) == [0, 1]


async def test_a_huge_body_that_is_not_json_opens_capped(tmp_path: Path) -> None:
    b = RecordBuilder()
    b.request("tools/call", {"name": "big"}, id=1)
    b.raw("x" * 5_000_000, "s2c")  # one 5 MB line, not JSON
    app = viewer(b.save(tmp_path / "c.jsonl"))
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot, app)
        await pilot.press("end", "enter")
        shown = shown_text(app, "#body-request")
        assert "press a to show all" in shown
        assert 1000 < shown.count("x") <= MAX_CHARS


async def test_a_filter_that_matches_nothing_closes_the_detail(tmp_path: Path) -> None:
    app = viewer(calls(tmp_path / "c.jsonl", 3))
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot, app)
        await pilot.press("enter")
        assert app.query_one(DetailPane).display
        await pilot.press("f", *"~m nothing/such", "enter")
        await wait_for(pilot, lambda: not app.flow_list.rows)
        await pilot.pause()
        assert not app.query_one(DetailPane).display


async def test_the_directory_view_lists_regular_files_only(tmp_path: Path) -> None:
    calls(tmp_path / "20261130-100000-1.jsonl", 2)
    os.mkfifo(tmp_path / "pipe.jsonl")  # reading it would block forever
    (tmp_path / "folder.jsonl").mkdir()
    app = McpeekApp([], directory=tmp_path, recheck_rules=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: len(app.views) == 1)
        await pilot.pause(0.3)
        assert [v.model.path.name for v in app.views] == ["20261130-100000-1.jsonl"]


async def test_the_directory_view_skips_a_capture_until_it_holds_data(tmp_path: Path) -> None:
    calls(tmp_path / "20261130-100000-1.jsonl", 2)
    empty = tmp_path / "20261130-100001-2.jsonl"
    empty.touch()  # a proxy that has not written its header yet
    app = McpeekApp([], directory=tmp_path, recheck_rules=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: len(app.views) == 1)
        await pilot.pause(0.3)
        assert [v.model.path.name for v in app.views] == ["20261130-100000-1.jsonl"]
        calls(empty, 1)
        await wait_for(pilot, lambda: len(app.views) == 2)  # a later scan finds it
