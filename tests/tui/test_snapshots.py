"""Snapshots of the viewer's main screens at a fixed size, from the committed captures.

Update them after a deliberate change of the look with
``pytest tests/tui/test_snapshots.py --snapshot-update`` and review the SVGs.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from mcpeek.tui.app import McpeekApp
from tests.tui.conftest import wait_loaded

ROOT = Path(__file__).resolve().parents[2]
SIZE = (120, 34)


@pytest.fixture(autouse=True)
def in_the_repository(monkeypatch: pytest.MonkeyPatch) -> None:
    """Paths on screen (the summary shows the file) are relative: the same in any clone."""
    monkeypatch.chdir(ROOT)


def app_on(name: str) -> McpeekApp:
    return McpeekApp([Path("captures") / name], follow=False, recheck_rules=False)


def after_loading(*keys: str) -> Callable[[Pilot[None]], Awaitable[None]]:
    async def run(pilot: Pilot[None]) -> None:
        app = pilot.app
        assert isinstance(app, McpeekApp)
        await wait_loaded(pilot, app)
        if keys:
            await pilot.press(*keys)
        await pilot.pause(0.2)

    return run


def test_flow_list(snap_compare: Any) -> None:
    app = app_on("modern-stdio.jsonl")
    assert snap_compare(app, terminal_size=SIZE, run_before=after_loading("home", "down", "down"))


def test_detail_of_a_call_with_progress(snap_compare: Any) -> None:
    app = app_on("modern-stdio.jsonl")
    keys = ("home", "down", "down", "down", "enter")  # tools/call count
    assert snap_compare(app, terminal_size=SIZE, run_before=after_loading(*keys))


def test_violations_panel(snap_compare: Any) -> None:
    app = app_on("violations.jsonl")
    assert snap_compare(app, terminal_size=SIZE, run_before=after_loading("v"))


def test_legacy_session_summary(snap_compare: Any) -> None:
    app = app_on("legacy-stdio.jsonl")
    assert snap_compare(app, terminal_size=SIZE, run_before=after_loading("s"))


def test_help_screen(snap_compare: Any) -> None:
    app = app_on("modern-http-sse.jsonl")
    assert snap_compare(app, terminal_size=SIZE, run_before=after_loading("question_mark"))


@pytest.mark.parametrize("size", [(80, 24), (120, 34), (160, 40)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_list_and_detail_at_each_width(snap_compare: Any, size: tuple[int, int]) -> None:
    """Columns sized to content, titles above them, the footer's Save and Quit,
    the progress bar apart from the notification lines."""
    app = app_on("violations.jsonl")
    keys = ("home", "down", "down", "down", "enter", *["right"] * 5)  # count: Notifications
    assert snap_compare(app, terminal_size=size, run_before=after_loading(*keys))
