"""``mcpeek diff``'s result: one object, printed as text for a reviewer or as JSON.

:func:`diff_captures` reads both captures once each (through ``run_capture``,
keeping their records for the traffic comparison) and returns a
:class:`DiffReport`: the surface differences, the traffic differences, and
each capture's own drift (definitions that changed between two list answers
of one conversation). ``same`` is about A against B only: a capture compared
with itself is the same even when it drifts within itself, and its drift is
still reported (a warning line in text). The JSON object is
``msgspec.json.encode(report)``; docs/diff.md documents it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec

from mcpeek.inspector.records import AnyRecord
from mcpeek.inspector.replay.canonical import Pointer
from mcpeek.inspector.surface.compare import PathDifference, SurfaceDifference, compare_surfaces
from mcpeek.inspector.surface.listen import CaptureSurface, read_surfaces
from mcpeek.inspector.surface.model import Drift
from mcpeek.inspector.surface.traffic import TrafficDifferences, compare_traffic

AREA_TITLES = {
    "tools": "tool",
    "resources": "resource",
    "resourceTemplates": "resource template",
    "prompts": "prompt",
    "server_capabilities": "server capability",
    "client_capabilities": "client capability",
    "server_info": "server info",
    "protocol_version": "protocol version",
    "era": "era",
    "conversation": "conversation",
}
NOTICE = {
    "tools": "notifications/tools/list_changed",
    "resources": "notifications/resources/list_changed",
    "resourceTemplates": "notifications/resources/list_changed",
    "prompts": "notifications/prompts/list_changed",
}
SHOWN = 100  # characters of a value shown in text before "…"


class DiffReport(msgspec.Struct, omit_defaults=False):
    a: str
    b: str
    same: bool
    surface: list[SurfaceDifference]
    traffic: TrafficDifferences
    drift_a: list[Drift]
    drift_b: list[Drift]


def _read(path: Path) -> tuple[CaptureSurface, list[AnyRecord]]:
    records: list[AnyRecord] = []
    surface = read_surfaces(path, records=records.append)
    head: list[AnyRecord] = [surface.header] if surface.header is not None else []
    return surface, head + records


def diff_captures(a: Path, b: Path, ignore: Sequence[Pointer] = ()) -> DiffReport:
    """Compare two capture files (raises ``CaptureError`` for one that cannot be read)."""
    surface_a, records_a = _read(a)
    surface_b, records_b = _read(b)
    surface = compare_surfaces(surface_a.conversations, surface_b.conversations)
    traffic = compare_traffic(records_a, records_b, ignore)
    return DiffReport(
        str(a),
        str(b),
        not surface and not traffic,
        surface,
        traffic,
        [d for c in surface_a.conversations for d in c.drift],
        [d for c in surface_b.conversations for d in c.drift],
    )


def _shown(value: Any) -> str:
    if value is msgspec.UNSET:
        return "(absent)"
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= SHOWN else text[: SHOWN - 1] + "…"


def _paths(paths: list[PathDifference], indent: str) -> list[str]:
    return [f"{indent}{p.path or '(whole)'}: {_shown(p.a)} → {_shown(p.b)}" for p in paths]


def drift_line(drift: Drift) -> str:
    """One line about one drift; a rug pull says so plainly."""
    what = f"{AREA_TITLES.get(drift.kind, drift.kind)} {drift.name!r} {drift.change}"
    if drift.fields:
        what += f" ({', '.join(drift.fields)})"
    where = f"between list answers #{drift.before_seq} and #{drift.after_seq}"
    if drift.rug_pull:
        return (
            f"RUG PULL: {what} {where} with no {NOTICE.get(drift.kind, 'list_changed')} "
            "in between: the server changed a definition the client had already read, "
            "the pattern behind tool poisoning"
        )
    told = "announced by list_changed" if drift.announced else "not announced by list_changed"
    return f"drift: {what} {where}, {told}"


def render_text(report: DiffReport) -> list[str]:
    lines = [f"--- A {report.a}", f"+++ B {report.b}"]
    for difference in report.surface:
        title = AREA_TITLES.get(difference.area, difference.area)
        head = f"{title} {difference.name!r}" if difference.name else title
        if difference.conversation:
            head = f"[conversation {difference.conversation + 1}] {head}"
        paths = difference.paths
        if not difference.name and len(paths) == 1 and not paths[0].path:
            lines.append(f"{head}: {_shown(paths[0].a)} → {_shown(paths[0].b)}")
            continue
        fields = f" ({', '.join(difference.fields)})" if difference.fields else ""
        lines.append(f"{head}: {difference.change}{fields}")
        lines += _paths(paths, "    ")
    traffic = report.traffic
    for answer in traffic.answers:
        name = f" {answer.name}" if answer.name else ""
        lines.append(
            f"answer differs: {answer.method}{name} (A #{answer.a_seq}, B #{answer.b_seq})"
        )
        lines += _paths(answer.paths, "    ")
    for side, requests in (("A", traffic.only_a), ("B", traffic.only_b)):
        for request in requests:
            name = f" {request.name}" if request.name else ""
            lines.append(f"only in {side}: {request.method}{name} (#{request.seq})")
    for side, drifts in (("A", report.drift_a), ("B", report.drift_b)):
        if side == "B" and report.a == report.b:
            break  # a capture against itself: its drift once
        lines += [f"{side}: {drift_line(drift)}" for drift in drifts]
    count = len(report.surface) + len(traffic.answers) + len(traffic.only_a) + len(traffic.only_b)
    lines.append("same" if report.same else f"{count} difference{'s' if count != 1 else ''}")
    return lines
