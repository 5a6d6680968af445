"""Checking a recorded capture against what its :class:`Example` promises.

An example capture is described by plain data: its era and protocol version,
transport, message count, the shape of every flow (:data:`FlowShape`), and
the rule IDs a linter must report (none for the conformant ones). :func:`check`
loads the capture and compares all of it, the proxy's live flags and a run of
``mcpeek lint`` included, and raises :class:`RecordingFailed` listing every
difference.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from mcpeek import inspector
from mcpeek.inspector.capture import CaptureError
from mcpeek.inspector.records import Violation
from mcpeek.inspector.tools._peer_runs import REPO_ROOT, RUN_TIMEOUT_S, RecordingFailed

LINT = (sys.executable, "-m", "mcpeek", "lint", "--format", "json", "--min-severity", "warning")

FlowShape = tuple[str, str | None, str | None, str, int, int]
"""(sender, method, name, status, attempts, progress notifications) of one flow."""


@dataclass(frozen=True)
class Example:
    name: str
    summary: str
    era: str
    protocol_version: str
    transport: str
    messages: int
    flows: tuple[FlowShape, ...]
    rules: tuple[str, ...] = ()
    """Sorted rule IDs ``mcpeek lint --min-severity warning`` reports, one per finding."""

    @property
    def file_name(self) -> str:
        return f"{self.name}.jsonl"


def flow_shapes(capture: inspector.Capture) -> tuple[FlowShape, ...]:
    return tuple(
        (f.sender, f.method, f.name, f.status, len(f.attempts), f.progress_count)
        for f in capture.flows
    )


def lint_rules(path: Path) -> list[str]:
    """The rule IDs ``mcpeek lint`` reports at warning or above, sorted, one per finding."""
    proc = subprocess.run(
        [*LINT, str(path)],
        check=False,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
        cwd=REPO_ROOT,
    )
    if proc.returncode not in (0, 1):
        raise RecordingFailed(f"mcpeek lint {path.name} failed: {proc.stderr.strip()[-500:]}")
    return sorted(json.loads(line)["rule"] for line in proc.stdout.splitlines() if line.strip())


def check(path: Path, example: Example, *, lint: bool = True) -> inspector.Capture:
    """Raise :class:`RecordingFailed` unless ``path`` holds what ``example`` promises."""
    try:
        capture = inspector.load(path)
    except CaptureError as exc:
        raise RecordingFailed(f"{path.name}: cannot be read: {exc}") from None
    wrong: list[str] = []
    if capture.problems:
        wrong.append(f"unreadable lines: {capture.problems[:3]}")
    if capture.header.transport != example.transport:
        wrong.append(f"transport {capture.header.transport!r}, expected {example.transport!r}")
    eras = [(c.era, c.protocol_version) for c in capture.conversations]
    if eras != [(example.era, example.protocol_version)]:
        wrong.append(f"conversations {eras}, expected [{(example.era, example.protocol_version)}]")
    if len(capture.messages) != example.messages:
        wrong.append(f"{len(capture.messages)} messages, expected {example.messages}")
    shapes = flow_shapes(capture)
    if shapes != example.flows:
        wrong.append(f"flows {list(shapes)}, expected {list(example.flows)}")
    live = sorted(
        r.rule for r in capture.records if isinstance(r, Violation) and r.severity != "info"
    )
    if live != list(example.rules):
        wrong.append(f"live flags {live or 'none'}, expected {list(example.rules) or 'none'}")
    if lint:
        found = lint_rules(path)
        if found != list(example.rules):
            expected = list(example.rules) or "nothing"
            wrong.append(f"lint found {found or 'nothing'}, expected {expected}")
    if wrong:
        raise RecordingFailed(f"{path.name} is not what it should be: " + "; ".join(wrong))
    return capture
