"""Shared fixtures: how to run mcpeek and the peer scripts as real processes."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

PEERS = Path(__file__).parent / "peers"


def mcpeek_argv(*args: str) -> list[str]:
    """The command line of mcpeek itself, from this checkout's interpreter."""
    return [sys.executable, "-m", "mcpeek", *args]


def peer_argv(script: str, *args: str) -> list[str]:
    return [sys.executable, str(PEERS / script), *args]


@pytest.fixture
def capture_path(tmp_path: Path) -> Path:
    return tmp_path / "cap.jsonl"
