"""Shared fixtures: how to run mcpeek and the peer scripts as real processes."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from mcpeek.inspector import children

PEERS = Path(__file__).parent / "peers"
#: The official MCP schemas and examples the tests compare against (see its README).
VENDORED_SPEC = Path(__file__).parent / "vendor" / "spec"


def needs(available: bool, what: str) -> None:
    """Skip a test that needs something the repository cannot hold (a device, a tool)
    when it is missing, but fail it under CI (``CI=true``): a CI job must run it."""
    if available:
        return
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(f"CI: this test needs {what}, which this machine lacks", pytrace=False)
    pytest.skip(f"needs {what}")


def mcpeek_argv(*args: str) -> list[str]:
    """The command line of mcpeek itself, from this checkout's interpreter, started
    as mcpeek starts its own children (isolated: ``python -I -m mcpeek``)."""
    return children.mcpeek_argv(*args)


def peer_argv(script: str, *args: str) -> list[str]:
    return [sys.executable, str(PEERS / script), *args]


@pytest.fixture
def capture_path(tmp_path: Path) -> Path:
    return tmp_path / "cap.jsonl"
