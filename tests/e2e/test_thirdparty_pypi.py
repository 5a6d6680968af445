"""Servers from PyPI, pinned in pyproject's dev extra: ``mcp-server-time`` and a
server written with ``fastmcp`` (tests/peers/fastmcp_server.py), recorded through
mcpeek on stdio and (fastmcp) Streamable HTTP, in both eras, and linted: only the
true violations listed here may be found.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from mcpeek import inspector
from tests.conftest import needs, peer_argv
from tests.e2e.test_sdk_http import free_port
from tests.e2e.thirdparty import assert_only, tour_http, tour_stdio, venv_script

pytestmark = pytest.mark.e2e

TIME_CALLS = [
    "--call=get_current_time={}".format(json.dumps({"timezone": "Europe/Paris"})),
    "--call=convert_time={}".format(
        json.dumps(
            {"source_timezone": "Europe/Paris", "time": "12:00", "target_timezone": "Asia/Tokyo"}
        )
    ),
]


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


def fastmcp_installed() -> None:
    needs(importlib.util.find_spec("fastmcp") is not None, "fastmcp (pip install -e '.[dev]')")


FASTMCP_CALLS = [
    "--call=add={}".format(json.dumps({"a": 2, "b": 3})),
    "--progress-call=slow={}".format(json.dumps({"steps": 3})),
]


@pytest.mark.parametrize(
    ("era", "version", "log_level"),
    [("auto", "2026-07-28", None), ("auto", "2026-07-28", "debug"), ("legacy", "2025-11-25", None)],
)
def test_fastmcp_stdio(era: str, version: str, log_level: str | None, capture_path: Path) -> None:
    fastmcp_installed()
    asks = [f"--log-level={log_level}"] if log_level else []
    server = peer_argv("fastmcp_server.py")
    outcome = tour_stdio(era, capture_path, server, *FASTMCP_CALLS, *asks)
    assert outcome["protocol_version"] == version
    assert outcome["calls"] == {"add": "5", "slow": "slow done"}
    assert outcome["progress"] == {"slow": 3}
    flows = inspector.load(capture_path).flows
    (slow,) = [f for f in flows if f.name == "slow"]
    methods = [e.method for e in slow.notifications]
    # 2026-07-28 logging is request-scoped: the call that set logLevel owns its log
    # line; without logLevel the server sends none.
    assert methods == ["notifications/message"] * bool(log_level) + ["notifications/progress"] * 3
    # 2025-11-25: ctx.info is a session log line (nothing on the wire ties it to the
    # call that was running), so a flow of its own.
    logs = [f.status for f in flows if f.method == "notifications/message"]
    assert logs == (["notification"] if era == "legacy" else [])
    assert_only(capture_path, [])  # (logLevel's deprecated.feature is an info)


@pytest.mark.parametrize(("era", "version"), [("auto", "2026-07-28"), ("legacy", "2025-11-25")])
def test_fastmcp_http(era: str, version: str, capture_path: Path) -> None:
    fastmcp_installed()
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
    fastmcp_installed()
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
