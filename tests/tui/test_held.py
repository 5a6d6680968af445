"""Releasing held messages from the viewer (``H``), through a real control channel.

The test holds messages itself (``Holds`` + ``ControlServer``, as a proxy with
``--intercept`` does, on the viewer's own loop as in ``mcpeek http``) and
drives the viewer with Pilot: forward, drop, an edit refused for invalid JSON
then sent, an answer in place.
"""

from __future__ import annotations

import asyncio
import io
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import msgspec
from rich.console import Console
from textual.widgets import Static, TextArea

from mcpeek.inspector.act.actor import Actor
from mcpeek.inspector.act.control import ControlServer, control_path
from mcpeek.inspector.act.hold import Held, Holds, Release
from mcpeek.inspector.act.inject import Injector
from mcpeek.inspector.act.verdicts import Outcome
from mcpeek.inspector.proxy.http_inject import HttpInjector
from mcpeek.inspector.records import Event, Header, Msg
from mcpeek.tui.held import HeldScreen
from mcpeek.tui.rows import Columns, fit, flow_row
from tests.tui.conftest import wait_for, wait_loaded
from tests.tui.test_acted import acted_capture
from tests.tui.test_app import SIZE, viewer

CALL = b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"add"}}'
NOTE = b'{"jsonrpc":"2.0","method":"notifications/progress","params":{}}'


@asynccontextmanager
async def holding(capture: Path) -> AsyncIterator[Holds]:
    holds = Holds()
    async with ControlServer(control_path(capture), holds):
        yield holds


async def open_held_screen(pilot, app) -> HeldScreen:  # type: ignore[no-untyped-def]
    """Load the capture, press ``H`` and return the held-messages screen."""
    await wait_loaded(pilot, app)
    await pilot.press("H")
    await wait_for(pilot, lambda: isinstance(app.screen, HeldScreen))
    screen = app.screen
    assert isinstance(screen, HeldScreen)
    return screen


async def opened(pilot, app, capture: Path) -> HeldScreen:  # type: ignore[no-untyped-def]
    screen = await open_held_screen(pilot, app)
    await wait_for(pilot, lambda: bool(screen.held))
    return screen


def screen_text(screen: HeldScreen, selector: str) -> str:
    console = Console(width=120, record=True, file=io.StringIO())
    console.print(screen.query_one(selector, Static).content)
    return console.export_text()


async def released(held: Held) -> tuple[str, bytes | None]:
    release = await asyncio.wait_for(held.future, 10)
    return release.action, release.data


async def test_forward_and_drop_with_a_running_timer(tmp_path: Path) -> None:
    capture = acted_capture(tmp_path / "c.jsonl")
    app = viewer(capture)
    async with holding(capture) as holds, app.run_test(size=SIZE) as pilot:
        first = holds.hold("c2s", "stdio", CALL, "request", "tools/call")
        second = holds.hold("s2c", "stdio", NOTE, "notification", "notifications/progress")
        await wait_loaded(pilot, app)
        status = app.query_one("#status", Static)
        await wait_for(pilot, lambda: "2 held (H)" in str(status.render()))  # the status line
        screen = await opened(pilot, app, capture)
        assert "2 held" in str(screen.query_one("#held-title").render())
        assert "tools/call" in screen_text(screen, "#held-raw")
        await pilot.press("f")
        assert await released(first) == ("forward", None)
        await wait_for(pilot, lambda: len(screen.held) == 1)
        await pilot.press("d")
        assert await released(second) == ("drop", None)


async def test_an_invalid_edit_is_refused_then_an_edit_is_sent(tmp_path: Path) -> None:
    capture = acted_capture(tmp_path / "c.jsonl")
    app = viewer(capture)
    async with holding(capture) as holds, app.run_test(size=SIZE) as pilot:
        held = holds.hold("c2s", "stdio", CALL, "request", "tools/call")
        screen = await opened(pilot, app, capture)
        await pilot.press("e")
        editor = screen.query_one("#held-editor", TextArea)
        assert editor.display and '"name":"add"' in editor.text
        editor.text = '{"jsonrpc": "2.0", "id": 5,'
        await pilot.press("ctrl+s")
        error = screen_text(screen, "#held-error")
        assert "not valid JSON" in error and "line 1 column 28" in error
        assert not held.future.done()  # still held
        editor.text = CALL.decode().replace("add", "sub")
        await pilot.press("ctrl+s")
        action, data = await released(held)
        assert action == "edit" and data is not None and b'"sub"' in data


async def test_a_held_request_is_answered_in_place(tmp_path: Path) -> None:
    capture = acted_capture(tmp_path / "c.jsonl")
    app = viewer(capture)
    async with holding(capture) as holds, app.run_test(size=SIZE) as pilot:
        held = holds.hold("c2s", "stdio", CALL, "request", "tools/call")
        screen = await opened(pilot, app, capture)
        await pilot.press("a")
        screen.query_one("#held-editor", TextArea).text = '{"result": {"content": []}}'
        await pilot.press("ctrl+s")
        action, data = await released(held)
        assert action == "answer"
        assert data == b'{"jsonrpc":"2.0","id":5,"result":{"content":[]}}'


async def test_without_a_proxy_holding_h_says_so(tmp_path: Path) -> None:
    app = viewer(acted_capture(tmp_path / "c.jsonl"))
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot, app)
        await pilot.press("H")
        await pilot.pause()
        assert not isinstance(app.screen, HeldScreen)
        assert any("no proxy holds" in str(n.message) for n in app._notifications)


async def test_inject_a_notification_to_the_client_and_a_request_to_the_server(
    tmp_path: Path,
) -> None:
    capture = acted_capture(tmp_path / "c.jsonl")
    app = viewer(capture)
    sent: list[tuple[str, bytes, str]] = []
    injector = Injector()
    injector.deliver = lambda direction, line, act: sent.append((direction, line, act.action))
    async with (
        ControlServer(control_path(capture), Holds(), injector),
        app.run_test(size=SIZE) as pilot,
    ):
        screen = await open_held_screen(pilot, app)
        await pilot.press("c")
        editor = screen.query_one("#held-editor", TextArea)
        assert "notifications/tools/list_changed" in editor.text
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: len(sent) == 1)
        await pilot.press("s")
        editor.text = '{"jsonrpc": "2.0", "id": 1, "method": "tools/list"'  # cut short
        await pilot.press("ctrl+s")
        assert "not valid JSON" in screen_text(screen, "#held-error") and len(sent) == 1
        editor.text = '{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}'
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: len(sent) == 2)
    (to_client, client_line, _), (to_server, server_line, action) = sent
    assert to_client == "s2c" and b"notifications/tools/list_changed" in client_line
    assert to_server == "c2s" and b'"id":"mcpeek-1"' in server_line and action == "inject"
    assert injector.pending == {("s2c", "mcpeek-1"): "tools/list"}  # its answer is mcpeek's


async def test_the_intercept_filter_is_set_refused_and_cleared_live(tmp_path: Path) -> None:
    capture = acted_capture(tmp_path / "c.jsonl")
    app = viewer(capture)
    actor = Actor()
    control = ControlServer(control_path(capture), actor.holds, actor.injector, actor.set_intercept)
    async with control, app.run_test(size=SIZE) as pilot:
        screen = await open_held_screen(pilot, app)
        await pilot.press("i", *"~m tools/call", "enter")
        await wait_for(pilot, lambda: len(actor.intercepts) == 1)
        assert str(actor.intercepts[0]) == "~m tools/call"
        await pilot.press("i", *"~x", "enter")
        await wait_for(pilot, lambda: "bad filter" in screen_text(screen, "#held-error"))
        assert str(actor.intercepts[0]) == "~m tools/call"  # unchanged
        await pilot.press("i", "enter")  # empty: hold nothing from now on
        await wait_for(pilot, lambda: actor.intercepts == [])


async def test_an_answer_can_be_picked_from_the_recorded_answers(tmp_path: Path) -> None:
    capture = acted_capture(tmp_path / "c.jsonl")  # one answered tools/call
    app = viewer(capture)
    async with holding(capture) as holds, app.run_test(size=SIZE) as pilot:
        held = holds.hold("c2s", "stdio", CALL, "request", "tools/call")
        screen = await opened(pilot, app, capture)
        await pilot.press("a", "ctrl+r")
        editor = screen.query_one("#held-editor", TextArea)
        assert '"Rainy"' in editor.text and "recorded answer 1 of 1" in screen_text(
            screen, "#held-error"
        )
        await pilot.press("ctrl+s")
        action, data = await released(held)
        assert action == "answer" and data is not None
        assert json.loads(data) == {
            "jsonrpc": "2.0",
            "id": 5,  # the held request's id, not the recorded one
            "result": {"content": [{"type": "text", "text": "Rainy"}]},
        }


async def test_a_flow_whose_answer_is_held_shows_held_and_a_timer(tmp_path: Path) -> None:
    capture = tmp_path / "pending.jsonl"
    records = [
        Header(transport="stdio", target=["server"]),
        Msg(seq=1, t=1.0, dir="c2s", ch="stdio", raw=CALL.decode()),  # its answer is held
        Event(seq=2, t=1.1, event="exit", code=0),
    ]
    capture.write_bytes(b"".join(msgspec.json.encode(r) + b"\n" for r in records))
    app = viewer(capture)
    answer = b'{"jsonrpc":"2.0","id":5,"result":{"content":[]}}'
    async with holding(capture) as holds, app.run_test(size=SIZE) as pilot:
        held = holds.hold("s2c", "stdio", answer, "result", "tools/call")
        await wait_loaded(pilot, app)
        (item,) = app.views[0].model.items
        await wait_for(pilot, lambda: item.held is not None)
        layout = fit(Columns().widen([item]), 120)
        row = flow_row(item, layout).plain
        assert " held " in row and " s " in row  # the marker and its running timer
        held.future.set_result(Release("forward"))
        await wait_for(pilot, lambda: item.held is None)  # released: the marker goes


async def test_an_injection_no_http_stream_can_carry_is_refused_in_the_viewer(
    tmp_path: Path,
) -> None:
    """An HTTP proxy whose client has no stream open says so; the editor stays open."""
    capture = acted_capture(tmp_path / "c.jsonl")
    app = viewer(capture)
    emitted: list[object] = []
    injector = Injector()

    async def undecided(direction: str, ch: str, raw: bytes) -> Outcome:
        raise AssertionError("nothing to decide: nothing was sent")

    http = HttpInjector(emitted.extend, undecided, lambda: "x1", lambda: None, "http://h")
    injector.deliver = http.deliver
    async with (
        ControlServer(control_path(capture), Holds(), injector),
        app.run_test(size=SIZE) as pilot,
    ):
        screen = await open_held_screen(pilot, app)
        await pilot.press("c")
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: "no stream" in screen_text(screen, "#held-error"))
        assert "no stream to the client is open" in screen_text(screen, "#held-error")
        assert screen.editing == "inject-client"  # still there, to send once one is open
        await pilot.press("escape")
        await pilot.press("s")
        screen.query_one("#held-editor", TextArea).text = '{"jsonrpc":"2.0","id":1,"method":"ping"}'
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: "not POSTed" in screen_text(screen, "#held-error"))
    assert emitted == [] and injector.pending == {}  # a refused request leaves no id behind
