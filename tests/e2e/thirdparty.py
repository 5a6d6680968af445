"""Recording a third-party server through mcpeek and linting the capture (shared by
test_thirdparty_npm.py and test_thirdparty_pypi.py).

The official Python SDK client (tests/peers/thirdparty_client.py) tours what a
server offers through ``mcpeek stdio`` or ``mcpeek http``; :func:`assert_only`
then holds ``mcpeek lint`` to exactly the true violations a test lists.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import mcpeek_argv, needs, peer_argv
from tests.e2e.test_sdk_http import free_port, running

THIRDPARTY = Path(__file__).parent.parent / "thirdparty"
NODE_MODULES = THIRDPARTY / "node_modules" / "@modelcontextprotocol"


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


def venv_script(name: str) -> str:
    """A console script installed beside this interpreter (the venv's bin/)."""
    return str(Path(sys.executable).parent / name)
