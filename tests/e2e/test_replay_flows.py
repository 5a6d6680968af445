"""``mcpeek replay --flow/--filter``: one flow re-run against real SDK servers, both eras.

The stdio captures of ``captures/`` were recorded from ``sdk_tour_server.py``
(its ``confirm`` tool asks the client: an MRTR ``input_required`` in the
modern era, a mid-call ``elicitation/create`` in the legacy one); the HTTP
ones are recorded here through ``mcpeek http``. Each re-run's own capture
(``-w``) is read back: it must hold the era's handshake and the selected
flow, nothing else.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcpeek import inspector
from tests.conftest import peer_argv
from tests.e2e.recording import record_http
from tests.e2e.test_replay import REPO, flows_of, mrtr_capture, replay
from tests.e2e.test_sdk_http import free_port, running

pytestmark = pytest.mark.e2e
HANDSHAKE = {"modern": ["server/discover"], "legacy": ["initialize", "notifications/initialized"]}


def numbered(capture: Path, name: str) -> int:
    """The flow number ``mcpeek show`` (and the viewer's # column) gives the call ``name``."""
    (flow,) = [f for f in inspector.load(capture).flows if f.name == name]
    return flow.number


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_one_stdio_flow_against_the_same_and_a_changed_server(era: str, tmp_path: Path) -> None:
    recorded = REPO / "captures" / f"{era}-stdio.jsonl"
    weather = str(numbered(recorded, "get_weather"))
    again = tmp_path / "again.jsonl"
    same = replay(
        str(recorded), "--flow", weather, "-w", str(again), "--", *peer_argv("sdk_tour_server.py")
    )
    assert same.returncode == 0, same.stdout + same.stderr
    assert f"flow {weather} tools/call get_weather" in same.stdout
    assert "replay: 1 flow, 1 same, 0 different" in same.stdout
    live = inspector.load(again)
    assert [f.method for f in live.flows] == [*HANDSHAKE[era], "tools/call"]
    assert live.flows[-1].name == "get_weather" and live.flows[-1].status == "complete"

    changed = replay(str(recorded), "--flow", weather, "--", *peer_argv("sdk_server_changed.py"))
    assert changed.returncode == 1, changed.stdout + changed.stderr
    assert f"flow {weather} tools/call get_weather (id 5 → " in changed.stdout
    assert '  - /result/content/0/text: "Sunny in Paris"' in changed.stdout
    assert '  + /result/content/0/text: "Rainy in Paris"' in changed.stdout
    assert "replay: 1 flow, 0 same, 1 different" in changed.stdout


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_a_stdio_flow_whose_server_asks_the_client(era: str, tmp_path: Path) -> None:
    recorded = REPO / "captures" / f"{era}-stdio.jsonl"
    again = tmp_path / "again.jsonl"
    result = replay(
        str(recorded),
        "--filter",
        "~n confirm",
        "--format",
        "json",
        "-w",
        str(again),
        "--",
        *peer_argv("sdk_tour_server.py"),
    )
    assert result.returncode == 0, result.stdout + result.stderr
    (report,) = flows_of(result.stdout)
    assert report["name"] == "confirm" and report["same"]
    (confirm,) = [f for f in inspector.load(again).flows if f.name == "confirm"]
    assert confirm.status == "complete"
    if era == "modern":  # MRTR: two attempts, the retry with the live requestState
        assert len(report["live_ids"]) == 2
        first, retry = confirm.attempts
        assert retry.request_state == first.issued_state is not None
    else:  # the live server asked mid-call and got the recorded answer
        assert any("elicitation/create; answered as recorded" in n for n in report["notes"])


def test_an_mrtr_flow_of_a_raw_server_gets_the_live_request_state(tmp_path: Path) -> None:
    recorded = mrtr_capture(tmp_path / "mrtr.jsonl")
    again = tmp_path / "again.jsonl"
    result = replay(
        str(recorded), "--flow", "2", "-w", str(again), "--", *peer_argv("mrtr_server.py")
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "flow 2 tools/call confirm (id 2, 3 → 2, 3): same" in result.stdout
    (confirm,) = [f for f in inspector.load(again).flows if f.name == "confirm"]
    first, retry = confirm.attempts
    assert retry.request_state == first.issued_state != "st-recorded-long-ago"


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_http_flows_against_the_sdk_server_and_a_changed_one(era: str, tmp_path: Path) -> None:
    recorded = tmp_path / "recorded.jsonl"
    record_http(era, recorded)
    add, confirm = numbered(recorded, "add"), numbered(recorded, "confirm")
    port = free_port()
    again = tmp_path / "again.jsonl"
    with running(peer_argv("sdk_http_server.py", "--port", str(port)), "listening on"):
        url = f"http://127.0.0.1:{port}/mcp"
        result = replay(
            str(recorded),
            "--url",
            url,
            "--flow",
            str(confirm),
            "--flow",
            str(add),
            "--format",
            "json",
            "-w",
            str(again),
        )
    assert result.returncode == 0, result.stdout + result.stderr
    reports = flows_of(result.stdout)
    assert [r["flow"] for r in reports] == sorted([add, confirm])
    assert all(r["same"] for r in reports)
    summary = json.loads(result.stdout.splitlines()[-1])
    assert summary["kind"] == "summary"
    live = inspector.load(again)
    calls = [f for f in live.flows if f.method == "tools/call"]
    assert sorted(f.name or "" for f in calls) == ["add", "confirm"]
    assert [f.method for f in live.flows if f.sender == "c2s"][: len(HANDSHAKE[era])] == (
        HANDSHAKE[era]
    )
    (live_confirm,) = [f for f in calls if f.name == "confirm"]
    if era == "modern":
        first, retry = live_confirm.attempts
        assert retry.request_state == first.issued_state is not None
    else:
        elicit = [f for f in live.flows if f.method == "elicitation/create"]
        assert len(elicit) == 1 and elicit[0].status == "complete"

    weather = str(numbered(recorded, "get_weather"))
    port = free_port()
    with running(peer_argv("sdk_http_server_changed.py", "--port", str(port)), "listening on"):
        url = f"http://127.0.0.1:{port}/mcp"
        changed = replay(str(recorded), "--url", url, "--flow", weather)
    assert changed.returncode == 1, changed.stdout + changed.stderr
    assert f"flow {weather} tools/call get_weather (id " in changed.stdout
    assert '  + /result/content/0/text: "Rainy in Paris"' in changed.stdout
    assert "replay: 1 flow, 0 same, 1 different" in changed.stdout
