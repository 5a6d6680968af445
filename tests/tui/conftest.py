"""Shared set-up of the viewer's tests: fixed time zone, captures to open, a wait helper."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from textual.pilot import Pilot

from mcpeek.inspector.records import Violation
from mcpeek.inspector.testing.records import RecordBuilder
from mcpeek.tui.app import McpeekApp


@pytest.fixture(autouse=True)
def utc(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Rows show local clock times: pin the zone so screens are the same everywhere."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def busy_capture(path: Path, calls: int = 120) -> Path:
    """A modern conversation: tool calls (some failing, some with progress), an
    MRTR chain, a list_changed notification, and one stored violation."""
    b = RecordBuilder(modern=True)
    b.request("server/discover", {}, id=0)
    b.result(0, {"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}}})
    for n in range(1, calls + 1):
        name = ("get_weather", "add", "count")[n % 3]
        meta = {"progressToken": n} if name == "count" else None
        b.request("tools/call", {"name": name, "arguments": {"n": n}}, id=n, meta=meta)
        if name == "count":
            for step in (1, 2):
                b.notify(
                    "notifications/progress", {"progressToken": n, "progress": step, "total": 2}
                )
        if n % 10 == 0:
            b.error(n, -32602, f"bad arguments {n}")
        else:
            b.result(n, {"content": [{"type": "text", "text": f"answer {n}"}]})
    b.request("tools/call", {"name": "confirm", "arguments": {}}, id="ask-1")
    b.input_required(
        "ask-1",
        state="s1",
        requests={"ok": {"method": "elicitation/create", "params": {"message": "sure?"}}},
    )
    retry = {"name": "confirm", "arguments": {}, "requestState": "s1", "inputResponses": {}}
    b.request("tools/call", retry, id="ask-2")
    b.result("ask-2", {"content": []})
    b.notify("notifications/tools/list_changed", {})
    bad = b.send({"jsonrpc": "2.0", "id": 999, "result": {"content": []}}, "s2c")
    b.add(
        Violation(
            rule="response.unknown-id",
            severity="error",
            msgs=[bad.seq],
            message="response to id 999, which no request used",
            spec="https://modelcontextprotocol.io/specification/2026-07-28/basic#responses",
        )
    )
    b.event("exit", code=0)
    return b.save(path)


async def wait_loaded(pilot: Pilot[None], app: McpeekApp, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not (app.views and all(v.done for v in app.views if v.started)):
        if time.monotonic() > deadline:
            raise AssertionError("captures did not load in time")
        await asyncio.sleep(0.02)
    await pilot.pause()


async def wait_for(pilot: Pilot[None], condition: object, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        await pilot.pause(0.05)
