"""``replay_flow``'s guard and plan: only the recorded server runs unless --allow-run."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcpeek import inspector
from mcpeek.inspector.assist.desk import AssistError
from mcpeek.inspector.assist.rerun import OPENING, guarded_target, one_flow_plan
from mcpeek.inspector.records import Header
from mcpeek.inspector.replay.replay_plan import ClientStep, build_plan

CAPTURES = Path(__file__).parents[3] / "captures"
STDIO = Header(transport="stdio", target=["python", "server.py"])
HTTP = Header(transport="http", target="http://127.0.0.1:8000/mcp")


def test_the_recorded_server_runs_by_default() -> None:
    assert guarded_target(STDIO, None, None, allow_run=False) == ("stdio", ["python", "server.py"])
    assert guarded_target(HTTP, None, None, allow_run=False) == ("http", HTTP.target)
    # naming the recorded server itself is no escape from the guard, and needs none
    assert guarded_target(STDIO, ["python", "server.py"], None, allow_run=False)[1] == [
        "python",
        "server.py",
    ]
    assert guarded_target(HTTP, None, str(HTTP.target), allow_run=False)[1] == HTTP.target


@pytest.mark.parametrize(
    ("header", "command", "url"),
    [
        (STDIO, ["sh", "-c", "rm -rf ~"], None),
        (STDIO, ["python", "server.py", "--extra"], None),
        (STDIO, None, "http://127.0.0.1:8000/mcp"),
        (HTTP, None, "http://127.0.0.1:9999/mcp"),
        (HTTP, ["python", "server.py"], None),
    ],
)
def test_anything_else_is_refused_without_allow_run(
    header: Header, command: list[str] | None, url: str | None
) -> None:
    with pytest.raises(AssistError, match="--allow-run"):
        guarded_target(header, command, url, allow_run=False)
    transport, target = guarded_target(header, command, url, allow_run=True)
    assert target == (command or url) and transport == ("stdio" if command else "http")


def test_both_or_no_recorded_server() -> None:
    with pytest.raises(AssistError, match="not both"):
        guarded_target(STDIO, ["x"], "http://127.0.0.1:1/", allow_run=True)
    with pytest.raises(AssistError, match="recorded no server"):
        guarded_target(Header(transport="stdio", target=""), None, None, allow_run=False)


def test_the_plan_is_the_opening_and_the_one_flow() -> None:
    capture = inspector.load(CAPTURES / "modern-stdio.jsonl")
    call = next(f for f in capture.flows if f.method == "tools/call")
    plan = build_plan(capture.records, capture.flows, "stdio")
    cut = one_flow_plan(plan, call.number)
    assert [f.number for f in cut.flows] == [call.number]
    steps = [s for s in cut.steps if isinstance(s, ClientStep)]
    assert len(steps) == len(cut.steps)
    assert [s.method for s in steps] == ["server/discover", "tools/call"]
    assert all(s.wait for s in steps if s.kind == "request")
    assert {s.method for s in steps[:-1]} <= OPENING


def test_the_legacy_opening_comes_along() -> None:
    capture = inspector.load(CAPTURES / "legacy-stdio.jsonl")
    last = [f for f in capture.flows if f.method == "tools/call"][-1]
    plan = one_flow_plan(build_plan(capture.records, capture.flows, "stdio"), last.number)
    methods = [s.method for s in plan.steps if isinstance(s, ClientStep)]
    assert methods == ["initialize", "notifications/initialized", "tools/call"]
