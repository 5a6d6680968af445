"""A rule must not fire on conformant traffic: real SDK conversations, both eras.

The official SDK's client and server talk through ``mcpeek stdio``; linting
the capture must find no error and no warning, and the proxy's live flags
must agree with ``lint`` (one path for live and recorded traffic).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from mcpeek.inspector.capture import read_records
from mcpeek.inspector.records import Violation
from tests.conftest import mcpeek_argv, peer_argv

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module", params=["modern", "legacy"])
def sdk_capture(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp(request.param) / "sdk.jsonl"
    proxy = mcpeek_argv("stdio", "-q", "-w", str(path), "--", *peer_argv("sdk_server.py"))
    proc = subprocess.run(
        peer_argv("sdk_client.py", "--era", request.param, "--", *proxy),
        capture_output=True,
        timeout=90,
    )
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    return path


def test_lint_finds_nothing_in_sdk_traffic(sdk_capture: Path) -> None:
    proc = subprocess.run(
        mcpeek_argv("lint", "--format", "json", "--min-severity", "warning", str(sdk_capture)),
        capture_output=True,
        timeout=60,
    )
    found = [json.loads(line) for line in proc.stdout.decode().splitlines()]
    assert found == [], "\n".join(f"{v['rule']}: {v['message']}" for v in found)
    assert proc.returncode == 0


def test_live_flags_agree_with_lint(sdk_capture: Path) -> None:
    _, records, _ = read_records(sdk_capture)
    live = sorted((r.rule, tuple(r.msgs)) for r in records if isinstance(r, Violation))
    proc = subprocess.run(
        mcpeek_argv("lint", "--format", "json", str(sdk_capture)), capture_output=True, timeout=60
    )
    linted = sorted(
        (v["rule"], tuple(v["msgs"])) for v in map(json.loads, proc.stdout.decode().splitlines())
    )
    assert live == linted
