"""Hung calls in the viewer: a request in flight on a live capture shows a running
timer, turns conspicuous past ``--slow``, and is counted on the status line.

The test writes the capture as a proxy does (whole lines, appended while the
viewer follows it) and drives the viewer's clock itself: every assert is on
what is shown after the clock was moved, none on how long anything took.
"""

from __future__ import annotations

import time
from pathlib import Path

import msgspec
import pytest
from rich.text import Text

from mcpeek.inspector.records import Event, Msg
from mcpeek.inspector.testing.records import RecordBuilder
from mcpeek.tui import row_strips
from mcpeek.tui.app import McpeekApp
from mcpeek.tui.flow_list import FlowList
from mcpeek.tui.rows import flow_row
from tests.tui.conftest import wait_for

SIZE = (120, 20)


class Clock:
    """The viewer's clock, moved by the test."""

    def __init__(self, start: float) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now


def _append(path: Path, *records: Msg | Event) -> None:
    with path.open("ab") as out:
        for record in records:
            out.write(msgspec.json.encode(record) + b"\n")


def _line(flows: FlowList, row: int) -> str:
    return flows.render_line(row - flows.scroll_offset.y).text


def _status(app: McpeekApp) -> str:
    rendered = app.status_bar.render()
    return rendered.plain if isinstance(rendered, Text) else str(rendered)


def _red_cells(flows: FlowList, row: int) -> str:
    """The text of the row drawn on a red background (the slow style)."""
    strip = flows.render_line(row - flows.scroll_offset.y)
    return "".join(
        seg.text
        for seg in strip
        if seg.style is not None
        and seg.style.bgcolor is not None
        and seg.style.bgcolor.name == "red"
    )


async def test_a_pending_call_shows_a_timer_that_advances_and_turns_slow(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sent = time.time()  # a live capture's times are the proxy's wall clock
    b = RecordBuilder(start=sent)
    b.request("tools/list", {}, id=0)
    b.result(0, {"tools": []})
    hung = b.request("tools/call", {"name": "hang", "arguments": {}}, id=1)
    path = b.save(tmp_path / "live.jsonl")
    clock = Clock(hung.t + 2.4)
    app = McpeekApp([path], follow=True, recheck_rules=False, slow=5.0, clock=clock)

    drawn: list[int] = []  # flows whose row was rendered (not taken from the cache)

    def counting_row(item, layout, **kwargs):  # type: ignore[no-untyped-def]
        drawn.append(item.flow.number)
        return flow_row(item, layout, **kwargs)

    monkeypatch.setattr(row_strips, "flow_row", counting_row)
    async with app.run_test(size=SIZE) as pilot:
        flows = app.query_one(FlowList)
        await wait_for(pilot, lambda: len(flows.rows) == 2)
        app.update_status()  # what the app's interval does: read the clock, redraw
        await pilot.pause()
        assert "pending" in _line(flows, 1) and "2 s" in _line(flows, 1)
        assert "1 pending" in _status(app) and "slow" not in _status(app)
        assert _red_cells(flows, 1) == ""

        drawn.clear()
        clock.now = hung.t + 3.5
        app.update_status()
        await pilot.pause()
        # The screen drew the row in flight again, and only it: the answered row's
        # drawing came from the cache (checked before this test draws anything itself).
        assert drawn and set(drawn) == {2}
        assert "3 s" in _line(flows, 1)

        clock.now = hung.t + 6.2  # past --slow
        app.update_status()
        await pilot.pause()
        assert "6 s" in _line(flows, 1)
        assert "pending" in _red_cells(flows, 1) and "6 s" in _red_cells(flows, 1)
        assert "1 pending (1 slow)" in _status(app)

        # The answer arrives: the timer gives way to the call's latency.
        answer = Msg(
            seq=4,
            t=hung.t + 6.5,
            dir="s2c",
            ch="stdio",
            raw='{"jsonrpc":"2.0","id":1,"result":{"content":[]}}',
        )
        _append(path, answer)
        await wait_for(
            pilot,
            lambda: flows.model is not None and flows.model.items[1].flow.status == "complete",
        )
        clock.now = hung.t + 8.0
        app.update_status()
        await pilot.pause()
        line = _line(flows, 1)
        assert "complete" in line and "6.5 s" not in line and "8 s" not in line
        assert _red_cells(flows, 1) == ""
        assert "pending" not in _status(app)


async def test_a_capture_read_once_shows_no_timer(tmp_path: Path) -> None:
    """Not live: a request still open when the capture was saved is unanswered, and
    no clock runs against it."""
    b = RecordBuilder(start=time.time())
    b.request("tools/call", {"name": "hang", "arguments": {}}, id=1)
    path = b.save(tmp_path / "old.jsonl")
    app = McpeekApp([path], follow=False, recheck_rules=False, clock=lambda: time.time() + 30)
    async with app.run_test(size=SIZE) as pilot:
        flows = app.query_one(FlowList)
        await wait_for(pilot, lambda: bool(app.views) and app.views[0].done)
        app.update_status()
        await pilot.pause()
        line = _line(flows, 0)
        assert "unanswered" in line and "30 s" not in line
        assert "pending" not in _status(app)


async def test_a_call_that_expires_leaves_pending_at_once(tmp_path: Path) -> None:
    """Past the analysis's timeout a call is unanswered: ``~s pending`` lets it go, the
    row and the status line say so, without waiting for another record to arrive."""
    b = RecordBuilder(start=time.time())
    hung = b.request("tools/call", {"name": "hang", "arguments": {}}, id=1)
    b.request("tools/call", {"name": "other", "arguments": {}}, id=2)
    path = b.save(tmp_path / "live.jsonl")
    app = McpeekApp([path], follow=True, recheck_rules=False, clock=Clock(hung.t + 6.0))
    async with app.run_test(size=SIZE) as pilot:
        flows = app.query_one(FlowList)
        await wait_for(pilot, lambda: len(flows.rows) == 2)
        assert app.set_filter("~s pending")
        await wait_for(pilot, lambda: app.views[0].filter is not None and len(flows.rows) == 2)
        app.update_status()
        await pilot.pause()
        assert "6 s" in _red_cells(flows, 0) and "2 pending (2 slow)" in _status(app)
        model = app.views[0].model
        model.analyzer.timeout = 0.001  # the loader's next tick of the clock ends the calls
        await wait_for(pilot, lambda: len(flows.rows) == 0)  # no longer pending: filtered out
        assert [item.flow.status for item in model.items] == ["unanswered"] * 2
        app.update_status()
        await pilot.pause()
        assert "2 pending" not in _status(app) and "0 shown" in _status(app)
