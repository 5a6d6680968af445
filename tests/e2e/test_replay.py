"""``mcpeek replay`` against real servers: the official SDK's (stdio and HTTP) and a raw MRTR one.

Each test records a real conversation first (the SDK client through
``mcpeek stdio -w`` or ``mcpeek http -w``), then replays the capture to a
fresh server: the same server must match (exit 0), a changed one must not
(exit 1, with a diff naming the flow). The replay's own capture (``-w``) is
checked too: it is what the live server really said.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from mcpeek import inspector
from mcpeek.inspector.testing.records import RecordBuilder
from tests.conftest import mcpeek_argv, peer_argv
from tests.e2e.recording import record_http, record_stdio
from tests.e2e.test_sdk_http import free_port, running

pytestmark = pytest.mark.e2e
REPO = Path(__file__).resolve().parents[2]


def replay(*args: str, timeout: float = 90) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        mcpeek_argv("replay", *args), capture_output=True, text=True, timeout=timeout
    )


def flows_of(output: str) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in output.splitlines()]
    return [line for line in lines if line["kind"] == "flow"]


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_replay_an_sdk_stdio_capture(era: str, tmp_path: Path) -> None:
    recorded = tmp_path / "recorded.jsonl"
    record_stdio(era, recorded)

    again = tmp_path / "replayed.jsonl"
    same = replay(str(recorded), "-w", str(again), "--", *peer_argv("sdk_server.py"))
    assert same.returncode == 0, same.stdout + same.stderr
    assert "5 flows, 5 same, 0 different" in same.stdout
    assert "Traceback" not in same.stderr
    live = inspector.load(again)
    assert [c.era for c in live.conversations] == [era]
    calls = [f for f in live.flows if f.method == "tools/call"]
    assert [f.name for f in calls] == ["add", "count", "get_weather"]
    assert all(f.status == "complete" for f in calls) and calls[1].progress_count == 3
    first = "initialize" if era == "legacy" else "server/discover"
    assert live.flows[0].method == first

    changed = replay(str(recorded), "--", *peer_argv("sdk_server_changed.py"))
    assert changed.returncode == 1, changed.stdout + changed.stderr
    out = changed.stdout
    assert "tools/call get_weather (id 5 → 5): DIFFERENT" in out
    assert '  - /result/content/0/text: "Sunny in Paris"' in out
    assert '  + /result/content/0/text: "Rainy in Paris"' in out
    assert "4 same, 1 different" in out

    ignored = replay(
        str(recorded),
        "--format",
        "json",
        "--ignore",
        "/result/content/0/text",
        "--ignore",
        "/result/structuredContent",
        "--",
        *peer_argv("sdk_server_changed.py"),
    )
    assert ignored.returncode == 0, ignored.stdout + ignored.stderr
    flows = flows_of(ignored.stdout)
    assert len(flows) == 5 and all(f["same"] for f in flows)
    count = next(f for f in flows if f["name"] == "count")
    assert count["progress"] == {"recorded": 3, "live": 3}


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_replay_an_sdk_http_capture(era: str, tmp_path: Path) -> None:
    recorded = tmp_path / "recorded.jsonl"
    record_http(era, recorded)
    port = free_port()
    again = tmp_path / "replayed.jsonl"
    with running(peer_argv("sdk_http_server.py", "--port", str(port)), "listening on"):
        url = f"http://127.0.0.1:{port}/mcp"
        result = replay(str(recorded), "--url", url, "--format", "json", "-w", str(again))
    assert result.returncode == 0, result.stdout + result.stderr
    flows = {f["name"] or f["method"]: f for f in flows_of(result.stdout)}
    assert all(f["same"] for f in flows.values())
    assert set(flows) >= {"tools/list", "add", "count", "get_weather", "confirm"}
    assert flows["count"]["progress"]["live"] == 3

    live = inspector.load(again)
    (confirm,) = [f for f in live.flows if f.name == "confirm"]
    assert confirm.status == "complete"
    if era == "modern":
        # MRTR: the retry carried the requestState the live server had just issued
        assert len(flows["confirm"]["live_ids"]) == 2
        first, retry = confirm.attempts
        assert first.result_type == "input_required"
        assert retry.request_state == first.issued_state
        recorded_state = inspector.load(recorded)
        (old,) = [f for f in recorded_state.flows if f.name == "confirm"]
        assert old.attempts[0].issued_state != first.issued_state  # sealed afresh
    else:
        # the live session id replaced the recorded one, and the elicitation was answered
        (conversation,) = live.conversations
        old_keys = [c.key for c in inspector.load(recorded).conversations]
        assert conversation.key.startswith("http:session:") and conversation.key not in old_keys
        assert any("elicitation/create" in note for note in flows["confirm"]["notes"])
        elicit = [f for f in live.flows if f.method == "elicitation/create"]
        assert len(elicit) == 1 and elicit[0].status == "complete"

    lint = subprocess.run(
        mcpeek_argv("lint", "--format", "json", "--min-severity", "error", str(again)),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert lint.stdout == "", lint.stdout


CAPABILITIES: dict[str, Any] = {
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}}
}
CACHE = {"ttlMs": 0, "cacheScope": "private"}
ASK = {
    "ask": {
        "method": "elicitation/create",
        "params": {
            "mode": "form",
            "message": "Proceed?",
            "requestedSchema": {
                "type": "object",
                "properties": {"confirm": {"type": "boolean"}},
                "required": ["confirm"],
            },
        },
    }
}


def mrtr_capture(path: Path) -> Path:
    """What a client of mrtr_server.py records: discover, then confirm in two attempts."""
    b = RecordBuilder(modern=True)
    b.request("server/discover", {}, id=1, meta=CAPABILITIES)
    b.result(1, {"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}}, **CACHE})
    call = {"name": "confirm", "arguments": {"question": "Proceed?"}}
    b.request("tools/call", call, id=2, meta=CAPABILITIES)
    b.input_required(2, state="st-recorded-long-ago", requests=ASK)
    answer = {"ask": {"action": "accept", "content": {"confirm": True}}}
    retry = {**call, "requestState": "st-recorded-long-ago", "inputResponses": answer}
    b.request("tools/call", retry, id=3, meta=CAPABILITIES)
    content = [{"type": "text", "text": "confirmed: Proceed?"}]
    b.result(3, {"content": content, "isError": False})
    return b.save(path)


def test_replay_mrtr_over_stdio_with_the_live_request_state(tmp_path: Path) -> None:
    recorded = mrtr_capture(tmp_path / "mrtr.jsonl")
    again = tmp_path / "replayed.jsonl"
    result = replay(str(recorded), "-w", str(again), "--", *peer_argv("mrtr_server.py"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "flow 2 tools/call confirm (id 2, 3 → 2, 3): same" in result.stdout
    (confirm,) = [f for f in inspector.load(again).flows if f.name == "confirm"]
    first, retry = confirm.attempts
    assert retry.request_state == first.issued_state != "st-recorded-long-ago"

    changed = replay(str(recorded), "--", *peer_argv("mrtr_server.py", "--no-input"))
    assert changed.returncode == 1, changed.stdout + changed.stderr
    assert "flow 2 tools/call confirm (id 2, 3 → 2): DIFFERENT" in changed.stdout
    assert "without asking for input" in changed.stdout
    assert '  + [attempt 1] /result/resultType: "complete"' in changed.stdout


def test_replay_against_a_mock_leaves_unanswered_server_requests_unanswered() -> None:
    # violations.jsonl: the recorded server sent a request (a list_changed with an id)
    # that the recorded client never answered. Regression: replay answered it with an
    # error and called the flow different.
    capture = str(REPO / "captures" / "violations.jsonl")
    mock = mcpeek_argv("serve", capture, "--timing", "fast", "-q")
    result = replay(capture, "--no-check", "--format", "json", "--", *mock)
    flows = {f["flow"]: f for f in flows_of(result.stdout)}
    assert result.returncode == 0, result.stdout + result.stderr
    assert all(f["same"] for f in flows.values())
    assert any("not answered, as in the recording" in note for note in flows[5]["notes"])


def structured(path: Path, values: dict[str, Any]) -> Path:
    b = RecordBuilder(modern=True)
    b.request("server/discover", {}, id=1)
    b.result(1, {"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}}, **CACHE})
    b.request("tools/call", {"name": "e", "arguments": {}}, id=2)
    b.result(2, {"content": [], "structuredContent": values})
    return b.save(path)


def test_ignore_covers_a_list_item_and_escaped_keys_present_on_one_side(tmp_path: Path) -> None:
    # Regression: --ignore .../list/2 still reported "- null / + (absent)" (3 was recorded).
    recorded = structured(tmp_path / "a.jsonl", {"a/b": 1, "c~d": 1, "list": [1, 2, 3]})
    live = structured(tmp_path / "b.jsonl", {"a/b": 2, "c~d": 2, "list": [1, 2]})
    mock = mcpeek_argv("serve", str(live), "--timing", "fast", "-q")
    list_only = replay(
        str(recorded), "--no-check", "--ignore", "/result/structuredContent/list/2", "--", *mock
    )
    assert list_only.returncode == 1, list_only.stdout + list_only.stderr
    assert "list/2" not in list_only.stdout
    assert "  - /result/structuredContent/a~1b: 1" in list_only.stdout
    ignore = [
        "--ignore",
        "/result/structuredContent/a~1b",
        "--ignore",
        "/result/structuredContent/c~0d",
    ]
    everything = replay(
        str(recorded),
        "--no-check",
        "--ignore",
        "/result/structuredContent/list/2",
        *ignore,
        "--",
        *mock,
    )
    assert everything.returncode == 0, everything.stdout + everything.stderr
    assert "2 flows, 2 same, 0 different" in everything.stdout
