"""Judge a replay: each live flow against its recording, and the report's two formats.

:func:`compare_flow` turns one :class:`~mcpeek.inspector.replay.replay.LiveFlow`
into a :class:`FlowReport`:

- ``differences``: one per JSON Pointer where a live response differs from
  the recorded one (:func:`~mcpeek.inspector.replay.diff.compare_responses`, so the
  id, volatile ``_meta`` members and ``_meta`` timestamps, the opaque
  ``requestState`` and the ``--ignore`` pointers never count), per MRTR
  attempt;
- ``problems``: what differs but has no path: a response that never came
  (and why: the timeout, an HTTP error status, the server gone, with the
  ``closed`` description the caller gives), an error where the recording has
  a result (also listed as differences), a retry that could not be sent, a
  different number of progress notifications;
- ``notes``: information that is no difference (the progress count when it
  matches, a request the recording never answered, server requests answered).

A flow is the same when it has neither differences nor problems.
:func:`write_text` prints a readable report (``-``: recorded, ``+``: live);
:func:`write_json` one JSON object per line (``"kind": "flow"``, then
``"violation"`` lines and one ``"summary"``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import IO, Any

import msgspec

from mcpeek.inspector.replay.canonical import Pointer
from mcpeek.inspector.replay.diff import MISSING, Difference, compare_responses
from mcpeek.inspector.replay.replay_plan import decode
from mcpeek.inspector.replay.replay_result import LiveFlow

SHOWN_DIFFERENCES = 30
VALUE_WIDTH = 200
EMPTY: Mapping[str, int] = MappingProxyType({})  # no rule's flags were left unshown


@dataclass
class FlowReport:
    number: int
    method: str | None
    name: str | None
    recorded_ids: list[Any]
    live_ids: list[Any]
    differences: list[Difference] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    progress: tuple[int, int] = (0, 0)  # recorded, live

    @property
    def same(self) -> bool:
        return not self.differences and not self.problems

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": "flow",
            "flow": self.number,
            "method": self.method,
            "name": self.name,
            "recorded_ids": self.recorded_ids,
            "live_ids": self.live_ids,
            "same": self.same,
            "differences": [d.to_json() for d in self.differences],
            "problems": self.problems,
            "notes": self.notes,
            "progress": {"recorded": self.progress[0], "live": self.progress[1]},
        }


def _outcome(message: dict[str, Any] | None) -> str:
    if message is None:
        return "nothing"
    error = message.get("error")
    if isinstance(error, dict):
        return f"an error ({error.get('code')}: {error.get('message')})"
    result = message.get("result")
    if isinstance(result, dict) and isinstance(result.get("resultType"), str):
        return f"a result ({result['resultType']})"
    return "a result"


def compare_flow(
    live: LiveFlow,
    ignore: Sequence[Pointer] = (),
    timeout: float = 0,
    closed: str | None = None,
) -> FlowReport:
    """``closed``: how the live server went away mid-replay (e.g. "the server exited
    (code 1)"), the reason given for what it left unanswered or unsent."""
    recorded = live.recorded
    report = FlowReport(
        recorded.number,
        recorded.method,
        recorded.name,
        list(recorded.ids),
        [a.live_id for a in live.attempts],
        problems=list(live.problems),
        notes=list(live.notes),
        progress=(recorded.progress_count, live.progress),
    )
    sent = {a.index: a for a in live.attempts}
    for index, attempt in enumerate(recorded.attempts):
        label = f"attempt {index + 1}: " if len(recorded.attempts) > 1 else ""
        mine = sent.get(index)
        if mine is None:
            if not live.stopped:
                why = f": {closed}" if closed else ""
                report.problems.append(f"{label}not sent{why}")
            continue
        want = decode(attempt.response.record) if attempt.response is not None else None
        got = mine.response
        if not isinstance(want, dict):
            if got is None:
                why = f"; live: {mine.problem}" if mine.problem else ""
                report.notes.append(f"{label}no response, as recorded ({recorded.status}){why}")
            else:
                report.notes.append(
                    f"{label}the live server answered {_outcome(got)}; the recording has no"
                    f" response ({recorded.status})"
                )
            continue
        if got is None:
            if mine.problem:
                why = f": {mine.problem}"
            elif mine.cut:
                why = f": {closed or 'the server went away'}"
            else:
                why = f" within {timeout:g} s" if timeout else ""
            report.problems.append(f"{label}no live response{why}; recorded {_outcome(want)}")
            continue
        if ("error" in want) != ("error" in got):
            report.problems.append(f"{label}recorded {_outcome(want)}, live {_outcome(got)}")
        elif _input_required(got) and not _input_required(want):
            report.problems.append(
                f"{label}the live server asked for input (input_required); the recording"
                " has no answer to give it"
            )
        report.differences += compare_responses(want, got, ignore, index + 1)
    recorded_count, live_count = report.progress
    if not live.attempts:
        pass  # never sent: "not sent" says it all
    elif recorded_count != live_count:
        report.problems.append(
            f"progress notifications: {recorded_count} recorded, {live_count} live"
        )
    elif recorded_count:
        report.notes.append(f"progress notifications: {live_count}, as recorded")
    return report


def _input_required(message: dict[str, Any]) -> bool:
    result = message.get("result")
    return isinstance(result, dict) and result.get("resultType") == "input_required"


def show_value(value: Any) -> str:
    if value is MISSING:
        return "(absent)"
    try:
        text = msgspec.json.encode(value).decode("utf-8", "replace")
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= VALUE_WIDTH else text[: VALUE_WIDTH - 1] + "…"


def _ids(ids: Sequence[Any]) -> str:
    return ", ".join(show_value(i) for i in ids) or "-"


def flow_title(report: FlowReport) -> str:
    what = " ".join(p for p in (report.method or "?", report.name) if p)
    verdict = "same" if report.same else "DIFFERENT"
    ids = f"id {_ids(report.recorded_ids)} → {_ids(report.live_ids)}"
    return f"flow {report.number} {what} ({ids}): {verdict}"


def text_lines(report: FlowReport) -> list[str]:
    lines = [flow_title(report)]
    for problem in report.problems:
        lines.append(f"  ! {problem}")
    multi = len(report.recorded_ids) > 1
    for difference in report.differences[:SHOWN_DIFFERENCES]:
        prefix = f"[attempt {difference.attempt}] " if multi else ""
        path = difference.path or "/"
        lines.append(f"  - {prefix}{path}: {show_value(difference.recorded)}")
        lines.append(f"  + {prefix}{path}: {show_value(difference.live)}")
    hidden = len(report.differences) - SHOWN_DIFFERENCES
    if hidden > 0:
        lines.append(f"  … and {hidden} more difference{'s' if hidden != 1 else ''}")
    for note in report.notes:
        lines.append(f"  · {note}")
    return lines


def summary_line(reports: Sequence[FlowReport], violations: int) -> str:
    differing = sum(1 for r in reports if not r.same)
    text = (
        f"replay: {len(reports)} flow{'s' if len(reports) != 1 else ''}, "
        f"{len(reports) - differing} same, {differing} different"
    )
    if violations:
        text += f"; {violations} server-side violation{'s' if violations != 1 else ''}"
    return text


def write_text(
    reports: Sequence[FlowReport],
    violations: Sequence[str],
    notes: Sequence[str],
    out: IO[str],
    *,
    unshown: Mapping[str, int] = EMPTY,
) -> None:
    """``unshown``: per rule, the violations found beyond those in ``violations``."""
    for note in notes:
        out.write(f"note: {note}\n")
    for report in reports:
        out.write("\n".join(text_lines(report)) + "\n")
    for line in violations:
        out.write(f"{line}\n")
    for rule, more in unshown.items():
        out.write(f"mcpeek: {rule}: {more} more flag{'s' if more != 1 else ''} not printed\n")
    out.write(summary_line(reports, len(violations) + sum(unshown.values())) + "\n")


def write_json(
    reports: Sequence[FlowReport],
    violations: Sequence[dict[str, Any]],
    notes: Sequence[str],
    out: IO[str],
    *,
    unshown: Mapping[str, int] = EMPTY,
) -> None:
    """``unshown``: per rule, the violations found beyond those in ``violations``."""
    encoder = msgspec.json.Encoder()
    for report in reports:
        out.write(encoder.encode(report.to_json()).decode() + "\n")
    for violation in violations:
        out.write(encoder.encode({"kind": "violation", **violation}).decode() + "\n")
    differing = sum(1 for r in reports if not r.same)
    summary = {
        "kind": "summary",
        "flows": len(reports),
        "different": differing,
        "violations": len(violations) + sum(unshown.values()),
        "notes": list(notes),
    }
    if unshown:
        summary["unshown"] = dict(unshown)
    out.write(encoder.encode(summary).decode() + "\n")
