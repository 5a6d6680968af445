"""The viewer follows captures that a proxy is still writing, and the capture directory."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import msgspec

from mcpeek.inspector.records import Event, Msg
from mcpeek.inspector.testing.records import RecordBuilder
from mcpeek.tui.app import McpeekApp
from mcpeek.tui.flow_list import FlowList
from tests.tui.conftest import busy_capture, wait_for

SIZE = (120, 36)


def append_calls(path: Path, first_id: int, count: int, seq: int, *, exit_at_end: bool) -> int:
    """Append tool calls to a capture the way a proxy does: whole lines, flushed."""
    encoder = msgspec.json.Encoder()
    t = time.time()
    with path.open("ab") as out:
        for n in range(first_id, first_id + count):
            for direction, body in (
                (
                    "c2s",
                    {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {"name": "add"}},
                ),
                ("s2c", {"jsonrpc": "2.0", "id": n, "result": {"content": []}}),
            ):
                seq += 1
                raw = encoder.encode(body).decode()
                out.write(
                    encoder.encode(Msg(seq=seq, t=t, dir=direction, ch="stdio", raw=raw)) + b"\n"
                )
            out.flush()
            time.sleep(0.01)
        if exit_at_end:
            seq += 1
            out.write(encoder.encode(Event(seq=seq, t=t, event="exit", code=0)) + b"\n")
    return seq


async def test_follows_a_capture_another_task_appends_to(tmp_path: Path) -> None:
    b = RecordBuilder()
    b.request("tools/list", {}, id=0)
    b.result(0, {"tools": []})
    path = b.save(tmp_path / "live.jsonl")
    app = McpeekApp([path], follow=True, recheck_rules=False)
    async with app.run_test(size=SIZE) as pilot:
        flows = app.query_one(FlowList)
        await wait_for(pilot, lambda: len(flows.rows) == 1)
        writer = threading.Thread(
            target=append_calls, args=(path, 1, 30, 2), kwargs={"exit_at_end": False}
        )
        writer.start()
        await wait_for(pilot, lambda: len(flows.rows) == 31)
        writer.join()
        assert flows.follow and flows.cursor == 30  # stuck to the newest
        await pilot.press("up")  # scrolling up stops following
        append_calls(path, 31, 5, 62, exit_at_end=True)
        await wait_for(pilot, lambda: app.views[0].done)
        assert len(flows.rows) == 36 and flows.cursor == 29 and not flows.follow
        assert app.views[0].model.ended


async def test_the_capture_directory_newest_first_and_new_ones_appear(
    tmp_path: Path,
) -> None:
    old = busy_capture(tmp_path / "20261130-100000-1.jsonl", calls=3)
    new = busy_capture(tmp_path / "20261130-110000-2.jsonl", calls=6)
    os.utime(old, (time.time() - 3600, time.time() - 3600))
    os.utime(new, (time.time() - 60, time.time() - 60))
    app = McpeekApp([], directory=tmp_path, recheck_rules=False)
    app.directory_poll = 0.2
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: len(app.views) == 2)
        assert [v.model.path.name for v in app.views] == [new.name, old.name]
        flows = app.query_one(FlowList)
        await wait_for(pilot, lambda: len(flows.rows) == 10)  # the newest is shown
        await pilot.press("right_square_bracket")
        await wait_for(pilot, lambda: len(flows.rows) == 7)
        assert app.current is app.views[1]
        newest = busy_capture(tmp_path / "20261130-120000-3.jsonl", calls=1)
        await wait_for(pilot, lambda: len(app.views) == 3)
        assert app.views[0].model.path == newest  # still newest first
        assert app.views[0].follow  # just written: followed as it grows
