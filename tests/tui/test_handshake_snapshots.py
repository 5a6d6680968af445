"""Snapshots of the handshake view (``h``) on the bundled captures, at two sizes.

Update them after a deliberate change of the look with
``pytest tests/tui/test_handshake_snapshots.py --snapshot-update`` and review the SVGs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mcpeek.tui.app import McpeekApp
from tests.tui.test_handshake import rug_pull_capture
from tests.tui.test_snapshots import after_loading, app_on, in_the_repository

__all__ = ["in_the_repository"]  # the fixture: paths on screen relative to the repository

CAPTURES = ("legacy-stdio.jsonl", "modern-stdio.jsonl", "modern-http-sse.jsonl")


@pytest.mark.parametrize("capture", CAPTURES)
def test_handshake_view(snap_compare: Any, capture: str) -> None:
    assert snap_compare(app_on(capture), terminal_size=(120, 34), run_before=after_loading("h"))


def test_handshake_view_small(snap_compare: Any) -> None:
    app = app_on("modern-stdio.jsonl")
    assert snap_compare(app, terminal_size=(80, 24), run_before=after_loading("h"))


def test_handshake_view_of_a_rug_pull(snap_compare: Any, tmp_path: Path) -> None:
    """A tool whose description changed with no list_changed: marked, and said."""
    capture = rug_pull_capture(tmp_path / "rug-pull.jsonl")
    app = McpeekApp([capture], follow=False, recheck_rules=False)
    assert snap_compare(app, terminal_size=(120, 34), run_before=after_loading("h"))
