"""The reference servers from npm, pinned, recorded through mcpeek and linted.

``@modelcontextprotocol/server-everything``, ``server-memory`` and
``server-filesystem`` are pinned in tests/thirdparty/package-lock.json and
installed by ``npm ci --prefix tests/thirdparty`` (.ci/run does it; under CI a
missing one fails the test). The official Python SDK client tours what each
offers, through ``mcpeek stdio`` and, for server-everything, ``mcpeek http``, in
the eras they speak (2025-11-25; the SDK's ``auto`` probe meets a rejection).
``mcpeek lint`` must report exactly the true violations listed here, each with
the spec sentence it breaks: any other finding is a false positive of a rule.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from mcpeek import inspector
from tests.conftest import mcpeek_argv
from tests.e2e.test_sdk_http import free_port
from tests.e2e.thirdparty import NODE_MODULES, assert_only, installed, tour_http, tour_stdio

pytestmark = pytest.mark.e2e

EVERYTHING = NODE_MODULES / "server-everything" / "dist" / "index.js"
MEMORY = NODE_MODULES / "server-memory" / "dist" / "index.js"
FILESYSTEM = NODE_MODULES / "server-filesystem" / "dist" / "index.js"

#: server-everything's tour: every tool that needs no client feature, the long one with progress.
EVERYTHING_CALLS = [
    "--call=echo={}".format(json.dumps({"message": "hi"})),
    "--call=get-sum={}".format(json.dumps({"a": 2, "b": 3})),
    "--call=get-structured-content={}".format(json.dumps({"location": "New York"})),
    "--call=get-tiny-image={}",
    "--call=get-resource-links={}".format(json.dumps({"count": 2})),
    "--call=get-annotated-message={}".format(json.dumps({"messageType": "error"})),
    "--call=toggle-simulated-logging={}",
    "--progress-call=trigger-long-running-operation={}".format(
        json.dumps({"duration": 1, "steps": 3})
    ),
    "--complete-prompt=completable-prompt:department",
]

#: A tools/call of server-everything's task-only tool, as a plain call (the SDK client
#: cannot make it a task): both sides then break the spec, see TASK_ONLY_VIOLATIONS.
TASK_ONLY_CALL = "--call=simulate-research-query={}".format(json.dumps({"topic": "mcp"}))

TASK_ONLY_VIOLATIONS = [
    # 2025-11-25/docs/basic/utilities/tasks.mdx, "Tool-Level Negotiation":
    # "If `execution.taskSupport` is `"required"`, clients **MUST** invoke the tool
    # as a task. Servers **MUST** return a `-32601` (Method not found) error if a
    # client does not attempt to do so."
    # The client's half: this test calls it without a task, on purpose.
    ("tasks.tool-support", "error", "without a task"),
    # The server's half: server-everything answers with an isError *result* whose
    # text says -32601, not with a JSON-RPC error.
    ("tasks.tool-support", "error", "with a result (it MUST answer -32601)"),
]

DISCOVER_REJECTED_WITH_NULL_ID = [
    # 2026-07-28/docs/basic/index.mdx, "Responses": "Error responses **MUST**
    # include the same ID as the request they correspond to (except in error cases
    # where the ID could not be read due a malformed request)."
    # server-everything's HTTP transport (TypeScript SDK 1.32) rejects the SDK
    # client's server/discover probe (id 1, perfectly readable) with HTTP 400 and
    # {"jsonrpc":"2.0","error":{...},"id":null}.
    ("id.null", "error", "answers server/discover whose id 1 was readable"),
]


def node_http_env(port: int) -> list[str]:
    return ["env", f"PORT={port}", "node", str(EVERYTHING), "streamableHttp"]


# --- server-everything -------------------------------------------------------


def test_everything_stdio_legacy(capture_path: Path) -> None:
    installed(EVERYTHING)
    server = ["node", str(EVERYTHING), "stdio"]
    outcome = tour_stdio("legacy", capture_path, server, *EVERYTHING_CALLS, TASK_ONLY_CALL)
    assert outcome["server"] == "mcp-servers/everything"
    assert outcome["protocol_version"] == "2025-11-25"
    calls = outcome["calls"]
    assert isinstance(calls, dict)
    assert calls["get-sum"] == "The sum of 2 and 3 is 5."
    assert str(calls["simulate-research-query"]).startswith("error: ")
    assert outcome["progress"] == {"trigger-long-running-operation": 3}
    assert outcome["completions"] == ["Engineering", "Sales", "Marketing", "Support"]
    assert_only(capture_path, TASK_ONLY_VIOLATIONS)


def test_everything_stdio_auto_falls_back_cleanly(capture_path: Path) -> None:
    """The SDK's default mode probes with server/discover; over stdio the TypeScript
    server answers -32601 with the right id, and the SDK falls back to initialize."""
    installed(EVERYTHING)
    server = ["node", str(EVERYTHING), "stdio"]
    outcome = tour_stdio("auto", capture_path, server, *EVERYTHING_CALLS)
    assert outcome["protocol_version"] == "2025-11-25"
    assert outcome["progress"] == {"trigger-long-running-operation": 3}
    assert_only(capture_path, [])


@pytest.mark.parametrize("era", ["legacy", "auto"])
def test_everything_http(era: str, capture_path: Path) -> None:
    installed(EVERYTHING)
    port = free_port()
    ready = f"listening on port {port}"
    outcome = tour_http(era, capture_path, node_http_env(port), ready, port, *EVERYTHING_CALLS)
    assert outcome["protocol_version"] == "2025-11-25"
    assert outcome["progress"] == {"trigger-long-running-operation": 3}
    assert_only(capture_path, DISCOVER_REJECTED_WITH_NULL_ID if era == "auto" else [])


CLIENT_FEATURE_CALLS = [
    "--client-features",
    "--call=get-roots-list={}",
    "--call=trigger-sampling-request={}".format(json.dumps({"prompt": "hi", "maxTokens": 10})),
    "--call=trigger-elicitation-request={}",
    "--subscribe=demo://resource/dynamic/text/1",
    "--call=toggle-subscriber-updates={}",
]


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_everything_asks_the_client(transport: str, capture_path: Path) -> None:
    """With sampling, elicitation and roots declared, server-everything asks for each
    in the middle of a call (on HTTP: on the call's SSE stream), and sends resource
    updates for a subscription: server requests the checks must take as legal."""
    installed(EVERYTHING)
    if transport == "stdio":
        server = ["node", str(EVERYTHING), "stdio"]
        outcome = tour_stdio("legacy", capture_path, server, *CLIENT_FEATURE_CALLS)
    else:
        port = free_port()
        server = node_http_env(port)
        ready = f"listening on port {port}"
        outcome = tour_http("legacy", capture_path, server, ready, port, *CLIENT_FEATURE_CALLS)
    assert outcome["asked"] == {
        "roots/list": 1,
        "sampling/createMessage": 1,
        "elicitation/create": 1,
    }
    flows = inspector.load(capture_path).flows
    asked = [(f.method, f.status) for f in flows if f.sender == "s2c" and f.attempts]
    assert asked == [
        ("roots/list", "complete"),
        ("sampling/createMessage", "complete"),
        ("elicitation/create", "complete"),
    ]
    assert "notifications/resources/updated" in {f.method for f in flows}
    assert_only(capture_path, [])


def test_everything_keeps_reporting_progress_after_a_cancellation(capture_path: Path) -> None:
    """server-everything's long operation ignores the cancellation: its later progress
    notifications are counted on the cancelled flow, in the model and in ``show``."""
    installed(EVERYTHING)
    server = ["node", str(EVERYTHING), "stdio"]
    long_call = json.dumps({"duration": 2, "steps": 4})
    cancel = [f"--cancel-call=trigger-long-running-operation={long_call}", "--linger=2.5"]
    outcome = tour_stdio("legacy", capture_path, server, *cancel)
    assert outcome["cancelled"] == ["trigger-long-running-operation"]
    (flow,) = [f for f in inspector.load(capture_path).flows if f.status == "cancelled"]
    assert flow.progress_count == 4
    shown = subprocess.run(
        mcpeek_argv("show", str(capture_path)), capture_output=True, text=True, check=True
    ).stdout.splitlines()
    lines = [ln for ln in shown if "trigger-long-running-operation" in ln]
    assert lines[0].endswith("cancelled  [1 progress]")
    assert lines[-1].endswith("[4 progress]  (after its end: notifications/progress)")
    assert_only(capture_path, [])


# --- server-memory ------------------------------------------------------------


def test_memory_stdio(tmp_path: Path, capture_path: Path) -> None:
    installed(MEMORY)
    entity = {"name": "mcpeek", "entityType": "tool", "observations": ["relays MCP"]}
    calls = [
        "--call=create_entities={}".format(json.dumps({"entities": [entity]})),
        "--call=search_nodes={}".format(json.dumps({"query": "mcpeek"})),
        "--call=read_graph={}",
    ]
    memory_file = tmp_path / "memory.jsonl"
    server = ["env", f"MEMORY_FILE_PATH={memory_file}", "node", str(MEMORY)]
    outcome = tour_stdio("auto", capture_path, server, *calls)
    read_graph = outcome["calls"]
    assert isinstance(read_graph, dict) and "relays MCP" in str(read_graph["read_graph"])
    assert "mcpeek" in memory_file.read_text()
    assert_only(capture_path, [])


def test_filesystem_stdio(tmp_path: Path, capture_path: Path) -> None:
    """server-filesystem: reads and writes inside its allowed directory, and a read
    outside it is a tool error (an isError result, as the spec wants), not a violation."""
    installed(FILESYSTEM)
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    (allowed / "a.txt").write_text("hello fs")
    outside = tmp_path / "outside.txt"
    outside.write_text("secret")
    calls = [
        "--call=list_allowed_directories={}",
        "--call=write_file={}".format(
            json.dumps({"path": str(allowed / "b.txt"), "content": "written"})
        ),
        "--call=list_directory={}".format(json.dumps({"path": str(allowed)})),
        "--call=read_text_file={}".format(json.dumps({"path": str(outside)})),
    ]
    server = ["node", str(FILESYSTEM), str(allowed)]
    outcome = tour_stdio("auto", capture_path, server, *calls)
    assert outcome["server"] == "secure-filesystem-server"
    results = outcome["calls"]
    assert isinstance(results, dict)
    assert results["list_directory"] == "[FILE] a.txt\n[FILE] b.txt"
    assert str(results["read_text_file"]).startswith("error: Access denied")
    assert (allowed / "b.txt").read_text() == "written"
    statuses = [(f.name, f.status) for f in inspector.load(capture_path).flows if f.name]
    assert ("read_text_file", "tool-error") in statuses
    assert_only(capture_path, [])
