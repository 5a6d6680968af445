"""What the plugin checks after a test: the spec rules over its MCP traffic, and misses.

The rules are the ones ``mcpeek lint`` runs (the same :class:`~mcpeek.rules.engine.RuleEngine`
over the same records), so a capture the plugin passes is one ``mcpeek lint``
passes. ``client_side`` keeps what the client under test got wrong, as
``mcpeek serve --strict`` does. The plugin is a composition root like the CLI:
it may import :mod:`rules`, lazily.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mcpeek.inspector.replay.mock import MockServer
    from mcpeek.rules.engine import Reported

LEVELS = ("error", "warning", "info")
ORDER = {"info": 0, "warning": 1, "error": 2}


def check_rule_ids(ids: Iterable[str]) -> list[str]:
    """``ids`` as a list; raises ``ValueError`` naming the ones the catalog lacks."""
    wanted = list(ids)
    if not wanted:
        return wanted
    from mcpeek import rules

    unknown = [r for r in wanted if r not in rules.catalog()]
    if unknown:
        raise ValueError(f"no such rule {', '.join(unknown)} (see: mcpeek rules)")
    return wanted


def lint_capture(
    path: Path, *, ignore_rules: Iterable[str] = ()
) -> tuple[list[Reported], dict[int, str]]:
    """Every violation in ``path`` (recomputed, like ``mcpeek lint``) and who sent each
    numbered message or HTTP record (``c2s``/``s2c``)."""
    from mcpeek.inspector.analysis import Analyzer
    from mcpeek.inspector.capture.reader import CaptureReader
    from mcpeek.inspector.capture.run import run_capture
    from mcpeek.inspector.records import AnyRecord, Http, Msg
    from mcpeek.rules.engine import RuleEngine

    found: list[Reported] = []
    analyzer = Analyzer([RuleEngine(found.append, ignore=ignore_rules)])
    directions: dict[int, str] = {}

    def note_direction(record: AnyRecord) -> None:
        if isinstance(record, Msg):
            directions[record.seq] = record.dir
        elif isinstance(record, Http):
            directions[record.seq] = "c2s" if record.phase == "request" else "s2c"

    run_capture(CaptureReader(path), analyzer, each=note_direction)
    return found, directions


def client_side(
    found: Iterable[Reported], direction: Callable[[int], str | None]
) -> list[Reported]:
    """The violations whose offending message the client sent."""
    from mcpeek.rules.blame import blames_the_client

    return [v for v in found if blames_the_client(v, direction)]


def at_least(found: Iterable[Reported], level: str | None) -> list[Reported]:
    """The violations at or above ``level`` (``None``: none)."""
    if level is None:
        return []
    floor = ORDER[level]
    return [v for v in found if ORDER.get(v.severity, 2) >= floor]


def stdio_misses(server: MockServer, session_capture: Path) -> list[str]:
    """What a stdio mock session could not answer, found again from its capture.

    The mock's matching is sans-IO and deterministic: feeding a fresh session the
    client's messages of the capture, in order, gives the misses the mock process had.
    """
    from mcpeek.inspector.capture.reader import CaptureReader
    from mcpeek.inspector.records import Msg, wire_bytes

    session = server.session()
    for record in CaptureReader(session_capture).records():
        if isinstance(record, Msg) and record.dir == "c2s":
            session.receive(wire_bytes(record))
    return list(session.misses)


def describe(violations: Sequence[Reported]) -> str:
    """A readable list: one block per violation, grouped by rule, errors first."""
    ordered = sorted(
        enumerate(violations), key=lambda p: (-ORDER.get(p[1].severity, 2), p[1].rule, p[0])
    )
    blocks = []
    for _, v in ordered:
        where = [v.method] if v.method else []
        if v.msg_id is not None:
            where.append(f"id {_json(v.msg_id)}")
        if v.msgs:
            where.append(f"seq {', '.join(map(str, v.msgs))}")
        lines = [f"  {v.severity.upper():<7} {v.rule}  ({', '.join(where) or 'capture'})"]
        lines.append(f"          {v.message}")
        if v.excerpt:
            lines.append(f"          message: {v.excerpt}")
        if v.spec:
            lines.append(f"          spec: {v.spec}")
        blocks.append("\n".join(lines))
    return "\n".join(blocks)


def summary(violations: Sequence[Reported]) -> str:
    """``3 errors, 1 warning: rule.a, rule.b``"""
    counts = {level: 0 for level in LEVELS}
    for v in violations:
        counts[v.severity if v.severity in counts else "error"] += 1
    text = ", ".join(f"{n} {level}{'s' if n != 1 else ''}" for level, n in counts.items() if n)
    rule_ids = sorted({v.rule for v in violations})
    return f"{text}: {', '.join(rule_ids)}" if rule_ids else "no violations"


def describe_misses(misses: Sequence[str]) -> str:
    return "\n".join(f"  - {miss}" for miss in misses)


def _json(value: object) -> str:
    import json

    try:
        return json.dumps(value)
    except (TypeError, ValueError):
        return repr(value)
