"""What a replay found: what the live server did with each recorded client flow.

The :class:`~mcpeek.inspector.replay.replay.Replayer` fills these in as the live
answers come; the report (:mod:`~mcpeek.inspector.replay.replay_report`) and
the viewer's re-run compare them with the recording.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mcpeek.inspector.analysis.flow import Flow


@dataclass
class LiveAttempt:
    index: int  # the recorded attempt it replays (0 for the first request)
    live_id: int
    request: dict[str, Any]
    response: dict[str, Any] | None = None
    problem: str | None = None  # why no response can come (e.g. "HTTP 501 Not Implemented")
    timed_out: bool = False  # no response within the timeout
    cut: bool = False  # still waiting (not timed out) when the server went away


@dataclass
class LiveFlow:
    """What the live server did with one recorded client flow."""

    recorded: Flow
    attempts: list[LiveAttempt] = field(default_factory=list)
    progress: int = 0
    notes: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    stopped: bool = False  # the chain ended early (the live server needed no input)
