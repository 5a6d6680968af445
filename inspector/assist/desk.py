"""The MCP server's tools as plain functions over the captures, without the SDK.

:class:`Desk` answers each tool with a dict (the structured result) or raises
:class:`AssistError` with one line saying what was wrong with the arguments;
:mod:`~mcpeek.inspector.assist.server` turns those into MCP tool errors.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

from mcpeek import rules
from mcpeek.inspector.assist.shapes import capture_summary, explanation, flow_detail, flow_row
from mcpeek.inspector.assist.shelf import Shelf, UnknownCapture
from mcpeek.inspector.assist.study import Studies, Study, file_stamp
from mcpeek.inspector.capture.files import being_written
from mcpeek.inspector.capture.reader import CaptureError
from mcpeek.inspector.filters import FilterError, compile_filter, filter_rows
from mcpeek.inspector.views.findings import lint_json
from mcpeek.inspector.views.session import FlowItem
from mcpeek.rules.base import SEVERITY_ORDER

PAGE = 50  # flows per list_flows answer unless the client asks
MAX_PAGE = 1000


class AssistError(ValueError):
    """A tool's arguments do not name something that exists, or make no sense."""


class Desk:
    def __init__(self, shelf: Shelf, studies: Studies | None = None) -> None:
        self.shelf = shelf
        self.studies = studies or Studies()
        # list_captures' lines, kept for every capture (a few hundred bytes each), so that
        # listing a directory of more captures than Studies keeps does not read them all
        # again: a line is reused while its file stays the same and no proxy writes it.
        self._lines: dict[Path, tuple[tuple[int, int, bool], dict[str, Any]]] = {}

    # -- reading ---------------------------------------------------------------------
    def open(self, capture: str) -> tuple[str, Study]:
        """The capture a ``capture`` argument names, read (its name as listed, and it)."""
        try:
            path = self.shelf.resolve(capture)
            return path.name, self.studies.get(path)
        except UnknownCapture as exc:
            raise AssistError(str(exc)) from None
        except CaptureError as exc:
            raise AssistError(f"capture {capture!r} cannot be read: {exc}") from None
        except OSError as exc:
            raise AssistError(
                f"capture {capture!r} cannot be read: {exc.strerror or exc}"
            ) from None

    def item(self, found: Study, flow: int) -> FlowItem:
        row = found.model.row_of_flow(flow)
        if row is None:
            count = len(found.model.items)
            raise AssistError(f"no flow {flow} in {found.path.name}: its flows are 1 to {count}")
        return found.model.items[row]

    # -- the tools -------------------------------------------------------------------
    def list_captures(self) -> dict[str, Any]:
        captures = []
        lines: dict[Path, tuple[tuple[int, int, bool], dict[str, Any]]] = {}
        for path in self.shelf.paths():
            try:
                stamp = (*file_stamp(path), being_written(path))
                held = self._lines.get(path)
                fresh = held is not None and held[0] == stamp and not stamp[2]
                line = held[1] if held is not None and fresh else None
                if line is None:
                    line = capture_summary(path.name, self.studies.get(path))
                lines[path] = (stamp, line)
            except (CaptureError, OSError) as exc:  # listed, with why it cannot be read
                line = {"name": path.name, "path": str(path), "error": str(exc)}
            captures.append(line)
        self._lines = lines  # (captures gone from the shelf are forgotten)
        return {"captures": captures}

    def list_flows(
        self, capture: str, filter: str = "", limit: int = PAGE, offset: int = 0
    ) -> dict[str, Any]:
        if not 1 <= limit <= MAX_PAGE:
            raise AssistError(f"limit must be 1 to {MAX_PAGE}, not {limit}")
        if offset < 0:
            raise AssistError(f"offset must be 0 or more, not {offset}")
        name, found = self.open(capture)
        items = found.model.items
        if filter.strip():
            try:
                chosen = filter_rows(compile_filter(filter), items)
            except FilterError as exc:
                raise AssistError(f"filter {filter!r}: {exc}") from None
            rows = [items[i] for i in chosen]
        else:
            rows = items
        page = rows[offset : offset + limit]
        return {
            "capture": name,
            "filter": filter,
            "total": len(items),
            "matched": len(rows),
            "offset": offset,
            "flows": [flow_row(item) for item in page],
            "more": offset + len(page) < len(rows),
        }

    def get_flow(self, capture: str, flow: int) -> dict[str, Any]:
        name, found = self.open(capture)
        return flow_detail(name, found, self.item(found, flow))

    def lint(self, capture: str, min_severity: str = "info") -> dict[str, Any]:
        if min_severity not in SEVERITY_ORDER:
            raise AssistError(f"min_severity must be error, warning or info, not {min_severity!r}")
        name, found = self.open(capture)
        floor = SEVERITY_ORDER[min_severity]
        shown = [v for v in found.found if SEVERITY_ORDER.get(v.severity, 2) >= floor]
        return {
            "capture": name,
            "violations": [lint_json(str(found.path), v) for v in shown],
            "problems": list(found.problems),
        }

    def diff_captures(self, a: str, b: str) -> dict[str, Any]:
        """``mcpeek diff A B --format json``'s object (surface, traffic, each one's drift)."""
        from mcpeek.inspector.surface.report import diff_captures

        paths = []
        for capture in (a, b):
            try:
                paths.append(self.shelf.resolve(capture))
            except UnknownCapture as exc:
                raise AssistError(str(exc)) from None
        try:
            report = diff_captures(paths[0], paths[1])
        except CaptureError as exc:
            raise AssistError(f"cannot compare: {exc}") from None
        except OSError as exc:
            raise AssistError(f"cannot compare: {exc.strerror or exc}") from None
        answer: dict[str, Any] = msgspec.to_builtins(report)
        return answer

    def explain_rule(self, rule_id: str) -> dict[str, Any]:
        if rule_id not in rules.catalog():
            raise AssistError(f"no rule {rule_id!r} (the catalog: mcpeek rules)")
        return explanation(rule_id)
