"""Real third-party MCP servers, pinned, recorded through mcpeek and linted.

The servers are what people really run: the reference servers from npm
(``@modelcontextprotocol/server-everything``, ``server-memory`` and
``server-filesystem``, pinned in
tests/thirdparty/package-lock.json and installed by ``npm ci --prefix
tests/thirdparty``), ``mcp-server-time`` from PyPI and a server written with
``fastmcp`` (both pinned in pyproject's dev extra). The official Python SDK
client (tests/peers/thirdparty_client.py) tours what each server offers,
through ``mcpeek stdio`` and, where the server has it, ``mcpeek http``, in the
eras the server speaks. ``mcpeek lint`` must then report exactly the true
violations listed here, each with the spec sentence it breaks: any other
finding is a false positive of a rule.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from mcpeek import inspector
from tests.conftest import mcpeek_argv, needs, peer_argv
from tests.e2e.test_sdk_http import free_port, running

pytestmark = pytest.mark.e2e

THIRDPARTY = Path(__file__).parent.parent / "thirdparty"
NODE_MODULES = THIRDPARTY / "node_modules" / "@modelcontextprotocol"
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


def installed(path: Path) -> None:
    needs(path.exists(), f"{path.relative_to(THIRDPARTY)} (run: npm ci --prefix tests/thirdparty)")


def tour_stdio(era: str, capture: Path, server: list[str], *calls: str) -> dict[str, object]:
    proxy = mcpeek_argv("stdio", "-q", "-w", str(capture), "--", *server)
    client = peer_argv("thirdparty_client.py", "--era", era, *calls, "--", *proxy)
    proc = subprocess.run(client, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    outcome: dict[str, object] = json.loads(proc.stdout)
    return outcome


def tour_http(
    era: str, capture: Path, server: list[str], ready: str, port: int, *calls: str
) -> dict[str, object]:
    proxy_port = free_port()
    proxy = mcpeek_argv(
        "http",
        "--upstream",
        f"http://127.0.0.1:{port}/mcp",
        "--listen",
        f"127.0.0.1:{proxy_port}",
        "-w",
        str(capture),
    )
    url = f"http://127.0.0.1:{proxy_port}/mcp"
    with running(server, ready), running(proxy, "proxying"):
        client = peer_argv("thirdparty_client.py", "--era", era, *calls, "--url", url)
        proc = subprocess.run(client, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    outcome: dict[str, object] = json.loads(proc.stdout)
    return outcome


def findings(capture: Path) -> list[tuple[str, str, str]]:
    """What ``mcpeek lint`` reports at warning or above: (rule, severity, message)."""
    proc = subprocess.run(
        mcpeek_argv("lint", "--format", "json", "--min-severity", "warning", str(capture)),
        capture_output=True,
        text=True,
    )
    assert proc.returncode in (0, 1), proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    return [(v["rule"], v["severity"], v["message"]) for v in lines]


def assert_only(capture: Path, expected: list[tuple[str, str, str]]) -> None:
    """Exactly the expected violations, in order; each message contains the expected text."""
    found = findings(capture)
    assert [(rule, sev) for rule, sev, _ in found] == [(rule, sev) for rule, sev, _ in expected], (
        found
    )
    for (_, _, message), (_, _, part) in zip(found, expected, strict=True):
        assert part in message


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


# --- PyPI servers: mcp-server-time, fastmcp -------------------------------------

TIME_CALLS = [
    "--call=get_current_time={}".format(json.dumps({"timezone": "Europe/Paris"})),
    "--call=convert_time={}".format(
        json.dumps(
            {"source_timezone": "Europe/Paris", "time": "12:00", "target_timezone": "Asia/Tokyo"}
        )
    ),
]


def venv_script(name: str) -> str:
    """A console script installed beside this interpreter (the venv's bin/)."""
    return str(Path(sys.executable).parent / name)


@pytest.mark.parametrize(("era", "version"), [("auto", "2026-07-28"), ("legacy", "2025-11-25")])
def test_time_stdio(era: str, version: str, capture_path: Path) -> None:
    server = venv_script("mcp-server-time")
    needs(Path(server).exists(), "mcp-server-time (pip install -e '.[dev]')")
    outcome = tour_stdio(era, capture_path, [server], *TIME_CALLS)
    assert outcome["protocol_version"] == version
    calls = outcome["calls"]
    assert isinstance(calls, dict) and "Asia/Tokyo" in str(calls["convert_time"])
    assert_only(capture_path, [])


RESPONSE_AFTER_CANCEL = [
    # 2025-11-25/docs/basic/utilities/cancellation.mdx, "Behavior Requirements":
    # "Receivers of cancellation notifications **SHOULD**: [...] Not send a response
    # for the cancelled request". The Python SDK's legacy HTTP transport answers the
    # cancelled tools/call with {"code": -32800, "message": "Request cancelled"}.
    ("cancel.response-after-cancel", "warning", "after the client cancelled it"),
]

FASTMCP_CALLS = [
    "--call=add={}".format(json.dumps({"a": 2, "b": 3})),
    "--progress-call=slow={}".format(json.dumps({"steps": 3})),
]


@pytest.mark.parametrize(("era", "version"), [("auto", "2026-07-28"), ("legacy", "2025-11-25")])
def test_fastmcp_stdio(era: str, version: str, capture_path: Path) -> None:
    outcome = tour_stdio(era, capture_path, peer_argv("fastmcp_server.py"), *FASTMCP_CALLS)
    assert outcome["protocol_version"] == version
    assert outcome["calls"] == {"add": "5", "slow": "slow done"}
    assert outcome["progress"] == {"slow": 3}
    flows = inspector.load(capture_path).flows
    (slow,) = [f for f in flows if f.name == "slow"]
    assert [e.method for e in slow.notifications] == ["notifications/progress"] * 3
    logs = [f for f in flows if f.method == "notifications/message"]
    # 2025-11-25: ctx.info is a session log line (nothing on the wire ties it to the
    # call that was running), so a flow of its own; 2026-07-28: the client set no
    # logLevel, so the server sends none.
    assert [f.status for f in logs] == (["notification"] if era == "legacy" else [])
    assert_only(capture_path, [])


@pytest.mark.parametrize(("era", "version"), [("auto", "2026-07-28"), ("legacy", "2025-11-25")])
def test_fastmcp_http(era: str, version: str, capture_path: Path) -> None:
    port = free_port()
    server = peer_argv("fastmcp_server.py", "--http", "--port", str(port))
    outcome = tour_http(era, capture_path, server, "listening on", port, *FASTMCP_CALLS)
    assert outcome["protocol_version"] == version
    assert outcome["calls"] == {"add": "5", "slow": "slow done"}
    assert outcome["progress"] == {"slow": 3}
    assert_only(capture_path, [])


@pytest.mark.parametrize("era", ["auto", "legacy"])
@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_fastmcp_cancellation(transport: str, era: str, capture_path: Path) -> None:
    slow = json.dumps({"steps": 4, "pause": 0.5})
    cancel = [f"--cancel-call=slow={slow}", "--linger=2.5"]
    if transport == "stdio":
        outcome = tour_stdio(era, capture_path, peer_argv("fastmcp_server.py"), *cancel)
    else:
        port = free_port()
        server = peer_argv("fastmcp_server.py", "--http", "--port", str(port))
        outcome = tour_http(era, capture_path, server, "listening on", port, *cancel)
    assert outcome["cancelled"] == ["slow"]
    (flow,) = [f for f in inspector.load(capture_path).flows if f.status == "cancelled"]
    assert flow.name == "slow"
    # Only the legacy HTTP transport answers the cancelled call (-32800).
    legacy_http = transport == "http" and era == "legacy"
    assert_only(capture_path, RESPONSE_AFTER_CANCEL if legacy_http else [])
