"""The example captures in ``captures/`` and their recorder, ``tools/record_examples.py``.

The committed captures are fixtures for other tests (the TUI snapshots, the
mock server): they must load, hold the conversations ``captures/README.md``
describes, be lint-clean when conformant and carry exactly the expected
violations otherwise. The recorder must refuse cleanly when it cannot run, and
(e2e) produce captures that pass the same checks.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest

from mcpeek import inspector
from mcpeek.inspector.analysis import Flow
from mcpeek.inspector.records import Http, Violation
from mcpeek.inspector.tools import record_examples
from mcpeek.inspector.tools.record_examples import BY_NAME, EXAMPLES, Example, check
from tests.conftest import mcpeek_argv

REPO = Path(__file__).resolve().parents[2]
CAPTURES = REPO / "captures"
CONFORMANT = ["modern-stdio", "modern-http-sse", "legacy-stdio"]
VIOLATIONS = [
    "notification.with-id",
    "progress.not-increasing",
    "response.unknown-id",
    "result.result-type-missing",
    "tools.output-schema",
]


def load(name: str) -> inspector.Capture:
    return inspector.load(CAPTURES / f"{name}.jsonl")


def lint(name: str, *options: str) -> tuple[int, list[dict[str, Any]]]:
    proc = subprocess.run(
        mcpeek_argv("lint", "--format", "json", *options, str(CAPTURES / f"{name}.jsonl")),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode in (0, 1), proc.stderr
    return proc.returncode, [json.loads(line) for line in proc.stdout.splitlines()]


def raw(entry: Any) -> str:
    return bytes(entry.wire()).decode()


def calls(capture: inspector.Capture) -> dict[str | None, Flow]:
    return {f.name: f for f in capture.flows if f.method == "tools/call"}


# -- the committed captures --------------------------------------------------------------
def test_there_is_one_capture_per_example_and_the_readme_names_each() -> None:
    files = sorted(p.name for p in CAPTURES.glob("*.jsonl"))
    assert files == sorted(e.file_name for e in EXAMPLES)
    readme = (CAPTURES / "README.md").read_text()
    assert all(f"`{e.file_name}`" in readme for e in EXAMPLES)
    assert "python -m mcpeek.inspector.tools.record_examples" in readme
    assert not list(CAPTURES.glob(".recording-*"))  # no leftover of a recording


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: e.name)
def test_committed_capture_is_what_its_example_promises(example: Example) -> None:
    capture = check(CAPTURES / example.file_name, example, lint=False)
    assert capture.problems == []
    assert len(capture.messages) == example.messages
    assert all(m.kind != "invalid" for m in capture.messages)


def test_modern_stdio_has_progress_an_mrtr_chain_resources_and_prompts() -> None:
    capture = load("modern-stdio")
    assert capture.header.transport == "stdio"
    assert capture.header.target == ["python", "tests/peers/sdk_tour_server.py"]
    (conversation,) = capture.conversations
    assert (conversation.era, conversation.protocol_version) == ("modern", "2026-07-28")
    assert conversation.declared.server_info["name"] == "mcpeek-sdk-tour-server"
    assert set(conversation.declared.tools) == {"add", "count", "get_weather", "confirm"}
    assert capture.flows[0].method == "server/discover"
    assert not any(m.method == "initialize" for m in capture.messages)
    tools = calls(capture)
    assert tools["count"].progress_count == 3
    assert [n.method for n in tools["count"].notifications] == ["notifications/progress"] * 3
    confirm = tools["confirm"]
    assert confirm.chain == [6, 7] and confirm.status == "complete"
    first, retry = confirm.attempts
    assert first.result_type == "input_required" and retry.result_type == "complete"
    assert first.input_request_keys and retry.request_state == first.issued_state
    assert "inputResponses" in raw(retry.request)
    methods = {f.method for f in capture.flows}
    assert {"resources/list", "resources/read", "prompts/list", "prompts/get"} <= methods
    assert all(f.era == "modern" for f in capture.flows)


def test_modern_http_sse_has_single_exchange_posts_and_an_sse_stream() -> None:
    capture = load("modern-http-sse")
    assert capture.header.transport == "http"
    assert [c.era for c in capture.conversations] == ["modern"]
    exchanges = [r for r in capture.records if isinstance(r, Http)]
    requests = [r for r in exchanges if r.phase == "request"]
    assert {r.method for r in requests} == {"POST"} and len(requests) == 11
    assert sorted(r.x for r in exchanges if r.phase == "end") == sorted(r.x for r in requests)
    assert all(r.reason == "complete" for r in exchanges if r.phase == "end")
    content_types = {
        r.x: dict(r.headers or []).get("content-type") for r in exchanges if r.phase == "response"
    }
    count = calls(capture)["count"]
    assert count.progress_count == 3
    assert count.request is not None
    assert content_types.pop(count.request.ch) == "text/event-stream"
    assert set(content_types.values()) == {"application/json"}
    # the progress events travelled on the count call's own SSE stream
    assert {n.ch for n in count.notifications} == {count.request.ch}
    assert not any("mcp-session-id" in dict(r.headers or []) for r in exchanges)
    assert calls(capture)["confirm"].chain == [6, 7]


def test_legacy_stdio_has_the_handshake_and_a_server_request() -> None:
    capture = load("legacy-stdio")
    (conversation,) = capture.conversations
    assert (conversation.era, conversation.protocol_version) == ("legacy", "2025-11-25")
    assert [m.method for m in capture.messages[:3]] == [
        "initialize",
        None,
        "notifications/initialized",
    ]
    (elicit,) = [f for f in capture.flows if f.method == "elicitation/create"]
    assert elicit.sender == "s2c" and elicit.status == "complete"
    confirm = calls(capture)["confirm"]
    assert confirm.request is not None and elicit.request is not None
    assert confirm.response is not None and elicit.response is not None
    # asked and answered while confirm was in flight
    assert confirm.request.seq < elicit.request.seq < elicit.response.seq < confirm.response.seq
    assert calls(capture)["count"].progress_count == 3
    assert not any("resultType" in raw(m) for m in capture.messages)


@pytest.mark.parametrize("name", CONFORMANT)
def test_lint_is_clean_on_the_conformant_captures(name: str) -> None:
    code, found = lint(name, "--min-severity", "warning")
    assert found == [], "\n".join(f"{v['rule']}: {v['message']}" for v in found)
    assert code == 0
    live = [r for r in load(name).records if isinstance(r, Violation)]
    assert live == []


def test_lint_reports_exactly_the_expected_violations() -> None:
    code, found = lint("violations")
    assert code == 1
    assert sorted(v["rule"] for v in found) == VIOLATIONS
    assert {v["severity"] for v in found} == {"error"}
    assert list(BY_NAME["violations"].rules) == VIOLATIONS
    capture = load("violations")
    by_seq = {m.seq: m for m in capture.messages}
    culprit = {v["rule"]: raw(by_seq[v["msgs"][-1]]) for v in found}
    assert '"structuredContent":{"result":"5"}' in culprit["tools.output-schema"]
    assert '"progress":2' in culprit["progress.not-increasing"]
    assert '"id":"n1"' in culprit["notification.with-id"]
    assert '"id":99' in culprit["response.unknown-id"]
    assert "Sunny in Paris" in culprit["result.result-type-missing"]
    assert all(by_seq[v["msgs"][-1]].dir == "s2c" for v in found)  # the server's, all of them
    # the live flags the proxy wrote agree with lint
    live = sorted((r.rule, tuple(r.msgs)) for r in capture.records if isinstance(r, Violation))
    assert live == sorted((v["rule"], tuple(v["msgs"])) for v in found)


# -- the recorder ------------------------------------------------------------------------
def run_recorder(*args: str, prelude: str = "") -> subprocess.CompletedProcess[str]:
    code = (
        f"import sys\n{prelude}\n"
        "from mcpeek.inspector.tools.record_examples import main\n"
        f"raise SystemExit(main({list(args)!r}))\n"
    )
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=REPO
    )


def test_recorder_without_the_peers_says_so_in_one_line(tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = run_recorder("--out", str(out), "--peers", str(tmp_path / "nowhere"))
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith("record_examples: error: no peer scripts in ")
    assert not out.exists()


def test_recorder_without_the_sdk_says_so_in_one_line(tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = run_recorder("--out", str(out), prelude="sys.modules['mcp'] = None")
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert "the official MCP SDK is not importable" in proc.stderr
    assert not out.exists()


def test_a_wrong_capture_fails_the_check_loudly(tmp_path: Path) -> None:
    example = BY_NAME["modern-stdio"]
    lines = (CAPTURES / example.file_name).read_text().splitlines(keepends=True)
    # drop the count call's last progress notification
    cut = [ln for ln in lines if '"progress\\":3,' not in ln]
    assert len(cut) == len(lines) - 1
    broken = tmp_path / example.file_name
    broken.write_text("".join(cut))
    with pytest.raises(record_examples.RecordingFailed, match="messages, expected 25"):
        check(broken, example, lint=False)


def test_examples_are_described_consistently() -> None:
    assert [e.name for e in EXAMPLES] == list(record_examples.RECORDERS)
    for example in EXAMPLES:
        assert msgspec.json.encode(example.flows)  # plain data, comparable across runs
        assert example.rules == tuple(sorted(example.rules))


@pytest.mark.e2e
def test_the_recorder_produces_loadable_captures(tmp_path: Path) -> None:
    out = tmp_path / "captures"
    proc = run_recorder("--out", str(out))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert sorted(p.name for p in out.iterdir()) == sorted(e.file_name for e in EXAMPLES)
    for example in EXAMPLES:
        capture = check(out / example.file_name, example, lint=False)
        assert capture.problems == []
    assert len(proc.stdout.splitlines()) == len(EXAMPLES)
