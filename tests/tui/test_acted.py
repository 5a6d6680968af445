"""The viewer on a capture where mcpeek acted on traffic (act records, made messages)."""

from __future__ import annotations

from pathlib import Path

import msgspec

from mcpeek.inspector.records import Act, Event, Header, Msg
from mcpeek.tui.detail import DetailPane
from mcpeek.tui.flow_list import FlowList
from mcpeek.tui.rows import MADE_MARK, Columns, fit, flow_row
from tests.tui.conftest import wait_loaded
from tests.tui.test_app import SIZE, shown_text, viewer

CALL = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_weather"}}'
SUNNY = '{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"Sunny"}]}}'
RAINY = SUNNY.replace("Sunny", "Rainy")


def acted_capture(path: Path) -> Path:
    records = [
        Header(transport="stdio", target=["server"]),
        Msg(seq=1, t=1.0, dir="c2s", ch="stdio", raw=CALL),
        Act(
            seq=2,
            t=1.1,
            action="edit",
            dir="s2c",
            ch="stdio",
            by="script",
            rule="rain.py",
            raw=SUNNY,
        ),
        Msg(seq=3, t=1.1, dir="s2c", ch="stdio", raw=RAINY, made="edit"),
        Event(seq=4, t=1.2, event="exit", code=0),  # the proxy is done: nothing to follow
    ]
    path.write_bytes(b"".join(msgspec.json.encode(r) + b"\n" for r in records))
    return path


async def test_a_flow_mcpeek_edited_is_marked_and_shows_the_original(tmp_path: Path) -> None:
    app = viewer(acted_capture(tmp_path / "acted.jsonl"))
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot, app)
        flows = app.query_one(FlowList)
        (item,) = app.views[0].model.items
        layout = fit(Columns().widen([item]), 120)
        assert flow_row(item, layout).plain.startswith(MADE_MARK)
        await pilot.press("home", "enter")
        detail = app.query_one(DetailPane)
        assert detail.display and flows.current_item is item
        assert "made by mcpeek (edit)" in shown_text(app, "#body-response")
        raw = shown_text(app, "#body-raw")
        assert "Rainy" in raw and "mcpeek: edit (script: rain.py)" in raw and "Sunny" in raw
