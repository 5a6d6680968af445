"""Snapshots of the handshake view (``h``) on the bundled captures, at two sizes.

Update them after a deliberate change of the look with
``pytest tests/tui/test_handshake_snapshots.py --snapshot-update`` and review the SVGs.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.tui.test_snapshots import after_loading, app_on, in_the_repository

__all__ = ["in_the_repository"]  # the fixture: paths on screen relative to the repository

CAPTURES = ("legacy-stdio.jsonl", "modern-stdio.jsonl", "modern-http-sse.jsonl")


@pytest.mark.parametrize("capture", CAPTURES)
def test_handshake_view(snap_compare: Any, capture: str) -> None:
    assert snap_compare(app_on(capture), terminal_size=(120, 34), run_before=after_loading("h"))


def test_handshake_view_small(snap_compare: Any) -> None:
    app = app_on("modern-stdio.jsonl")
    assert snap_compare(app, terminal_size=(80, 24), run_before=after_loading("h"))
