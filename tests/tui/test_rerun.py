"""The viewer's re-run keys (``r``, ``R``) with Pilot, against the real SDK servers.

The capture is ``captures/modern-stdio.jsonl`` with its header naming a
server this test can start (the recorded one names a path relative to the
repository). The re-run's answer opens beside the recorded one; its own
capture is a new file; the viewed capture is never written.
"""

from __future__ import annotations

import html
import json
from pathlib import Path

import pytest
from rich.text import Text

from mcpeek import inspector
from mcpeek.tui.app import McpeekApp
from mcpeek.tui.flow_list import FlowList
from mcpeek.tui.rerun_screen import LIVE_MARK, RECORDED_MARK, RerunScreen, json_text
from tests.conftest import peer_argv
from tests.e2e.test_sdk_http import free_port, running
from tests.tui.conftest import wait_for, wait_loaded

pytestmark = pytest.mark.e2e
REPO = Path(__file__).resolve().parents[2]
SIZE = (140, 40)
RERUN_WAIT = 60.0  # a real server starts (an event, not a timed assert: the test waits for it)


def capture_naming(
    path: Path, target: list[str] | str, transport: str = "stdio", source: str = "modern-stdio"
) -> Path:
    lines = (REPO / "captures" / f"{source}.jsonl").read_text().splitlines()
    header = json.loads(lines[0])
    header.update(target=target, transport=transport)
    path.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    return path


def weather_row(app: McpeekApp) -> int:
    assert app.current is not None
    items = app.current.model.items
    return next(i for i, item in enumerate(items) if item.flow.name == "get_weather")


async def select_weather(pilot, app: McpeekApp) -> None:  # type: ignore[no-untyped-def]
    await wait_loaded(pilot, app)
    flows = app.query_one(FlowList)
    flows.focus()
    await pilot.press("home", *["down"] * weather_row(app))
    assert flows.current_item is not None and flows.current_item.flow.name == "get_weather"


def shown_or_refused(app: McpeekApp) -> bool:
    """The re-run ended: its answer is shown, or a notice says why not."""
    refused = any(n.severity in ("error", "warning") for n in app._notifications)
    return isinstance(app.screen, RerunScreen) or refused


def marked_lines(text: Text, style: str) -> list[str]:
    lines = text.plain.splitlines()
    out = []
    offset = 0
    for line in lines:
        spans = [s for s in text.spans if s.start <= offset < s.end and str(s.style) == style]
        if spans:
            out.append(line.strip())
        offset += len(line) + 1
    return out


async def test_r_reruns_a_flow_against_a_changed_server_beside_the_recording(
    tmp_path: Path,
) -> None:
    viewed = capture_naming(tmp_path / "cap.jsonl", peer_argv("sdk_server_changed.py"))
    before = viewed.read_bytes()
    app = McpeekApp([viewed], follow=False, recheck_rules=False)
    async with app.run_test(size=SIZE) as pilot:
        await select_weather(pilot, app)
        await pilot.press("r")
        await wait_for(pilot, lambda: shown_or_refused(app), RERUN_WAIT)
        screen = app.screen
        assert isinstance(screen, RerunScreen), [n.message for n in app._notifications]
        assert not screen.report.same
        paths = {d.path for d in screen.report.differences}
        assert "/result/content/0/text" in paths
        assert screen.capture == tmp_path / "cap.rerun-5-1.jsonl"
        await pilot.press("escape")
        assert not isinstance(app.screen, RerunScreen)
    assert viewed.read_bytes() == before  # never written into
    again = inspector.load(tmp_path / "cap.rerun-5-1.jsonl")
    assert [f.method for f in again.flows] == ["server/discover", "tools/call"]
    assert again.flows[1].name == "get_weather"


async def test_the_live_servers_violations_are_shown_with_its_answer(tmp_path: Path) -> None:
    viewed = capture_naming(tmp_path / "cap.jsonl", peer_argv("bad_server.py"), source="violations")
    app = McpeekApp([viewed], follow=False, recheck_rules=False)
    async with app.run_test(size=SIZE) as pilot:
        await select_weather(pilot, app)
        await pilot.press("r")
        await wait_for(pilot, lambda: shown_or_refused(app), RERUN_WAIT)
        screen = app.screen
        assert isinstance(screen, RerunScreen), [n.message for n in app._notifications]
        assert screen.report.same  # bad_server answers as it was recorded: badly
        rules = {line.split()[1] for line in screen.violations}
        assert "result.result-type-missing" in rules  # get_weather's own result


async def test_a_server_command_that_no_longer_starts_gives_a_notice(tmp_path: Path) -> None:
    viewed = capture_naming(tmp_path / "cap.jsonl", [str(tmp_path / "gone-server")])
    before = viewed.read_bytes()
    app = McpeekApp([viewed], follow=False, recheck_rules=False)
    async with app.run_test(size=SIZE) as pilot:
        await select_weather(pilot, app)
        await pilot.press("r")
        await wait_for(
            pilot, lambda: any(n.severity == "error" for n in app._notifications), RERUN_WAIT
        )
        (notice,) = [n for n in app._notifications if n.severity == "error"]
        assert notice.title == "cannot re-run"
        assert "cannot start the server" in notice.message and "gone-server" in notice.message
        assert not isinstance(app.screen, RerunScreen) and app.is_running
        assert len(app.views[0].model.items) == 10  # the session is all there still
    assert viewed.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cap.jsonl"]  # no empty capture left


async def test_capital_r_reruns_against_the_upstream_of_the_live_http_session(
    tmp_path: Path,
) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    viewed = capture_naming(tmp_path / "old.jsonl", ["nothing-to-start"])
    # what mcpeek http writes first: its header names the upstream, then where it listens
    live = tmp_path / "live.jsonl"
    header = {"k": "header", "format": "mcpeek-capture", "v": 1, "transport": "http"}
    header["created"] = "2026-01-01T00:00:00Z"
    listen = {"k": "event", "seq": 1, "t": 1.0, "event": "listen", "addr": "127.0.0.1:1"}
    live.write_text(json.dumps({**header, "target": url}) + "\n" + json.dumps(listen) + "\n")
    app = McpeekApp([viewed, live], follow=False, recheck_rules=False, runs_proxy=True)
    async with app.run_test(size=SIZE) as pilot:
        for path in (live, viewed):  # a tab loads when it is first shown
            app.activate(next(v for v in app.views if v.model.path == path))
            await wait_loaded(pilot, app)
        await select_weather(pilot, app)
        with running(peer_argv("sdk_http_server.py", "--port", str(port)), "listening on"):
            await pilot.press("R")
            await wait_for(pilot, lambda: shown_or_refused(app), RERUN_WAIT)
        screen = app.screen
        assert isinstance(screen, RerunScreen), [n.message for n in app._notifications]
        assert screen.report.same, screen.report.problems
        assert "live.jsonl" in screen.against
    again = inspector.load(tmp_path / "old.rerun-5-1.jsonl")
    assert again.header.transport == "http" and again.header.target == url


async def test_capital_r_without_a_live_http_session_says_so(tmp_path: Path) -> None:
    viewed = capture_naming(tmp_path / "cap.jsonl", ["nothing-to-start"])
    app = McpeekApp([viewed], follow=False, recheck_rules=False)
    async with app.run_test(size=SIZE) as pilot:
        await select_weather(pilot, app)
        await pilot.press("R")
        await pilot.pause()
        assert any("no live mcpeek http session" in n.message for n in app._notifications)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cap.jsonl"]


def test_the_differences_are_marked_on_both_sides() -> None:
    marked = {"/result/content/0/text"}
    recorded = {"result": {"content": [{"type": "text", "text": "Sunny"}], "isError": False}}
    text = json_text(recorded, marked, RECORDED_MARK)
    assert marked_lines(text, RECORDED_MARK) == ['"text": "Sunny"']
    live = {"result": {"content": [{"type": "text", "text": "Rainy"}]}, "extra": [1, 2]}
    text = json_text(live, marked | {"/extra"}, LIVE_MARK)
    assert marked_lines(text, LIVE_MARK) == ['"text": "Rainy"', '"extra": [', "1,", "2", "]"]


async def test_r_on_an_http_capture_reruns_against_its_upstream(tmp_path: Path) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    viewed = capture_naming(tmp_path / "cap.jsonl", url, transport="http")
    app = McpeekApp([viewed], follow=False, recheck_rules=False)
    async with app.run_test(size=SIZE) as pilot:
        await select_weather(pilot, app)
        with running(peer_argv("sdk_http_server_changed.py", "--port", str(port)), "listening on"):
            await pilot.press("r")
            await wait_for(pilot, lambda: shown_or_refused(app), RERUN_WAIT)
        screen = app.screen
        assert isinstance(screen, RerunScreen), [n.message for n in app._notifications]
        assert screen.against == url and not screen.report.same
        await pilot.pause()
        svg = app.export_screenshot()  # both answers on screen, side by side
        shown = html.unescape(svg.replace("&#160;", " "))
        assert '"text": "Sunny in Paris"' in shown and '"text": "Rainy in Paris"' in shown
        left, right = (screen.query_one(f"#{side}").region for side in ("recorded", "live"))
        assert left.y == right.y and left.right <= right.x


async def test_r_on_a_flow_that_is_no_client_request_says_so(tmp_path: Path) -> None:
    viewed = capture_naming(tmp_path / "cap.jsonl", ["nothing-to-start"], source="legacy-stdio")
    app = McpeekApp([viewed], follow=False, recheck_rules=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot, app)
        await pilot.press("home", "down")  # flow 2: notifications/initialized
        await pilot.press("r")
        await pilot.pause()
        assert any("not a client request" in n.message for n in app._notifications)
        assert not isinstance(app.screen, RerunScreen)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cap.jsonl"]
