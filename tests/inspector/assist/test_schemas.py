"""The tools' output schemas pass on what they do not name.

The SDK validates each structured answer against its tool's schema and would
drop a field the schema does not list: a field ``show``, ``lint`` or ``diff``
print in a later version must still reach the client, or the answers would no
longer be what the CLI prints.
"""

from __future__ import annotations

from typing import Any

import msgspec
from pydantic import TypeAdapter

from mcpeek.inspector.analysis import analyze
from mcpeek.inspector.assist.schemas import DiffResult, FlowPage, FlowRow
from mcpeek.inspector.assist.shapes import flow_row
from mcpeek.inspector.testing.records import RecordBuilder
from mcpeek.inspector.views.flow_item import FlowItem
from mcpeek.inspector.views.flowline import FlowJson


def a_flow_row() -> dict[str, Any]:
    """The row ``list_flows`` sends for a real flow (a tools/call and its result)."""
    b = RecordBuilder()
    b.request("tools/call", {"name": "get_weather", "arguments": {}}, id=3)
    b.result(3, {"content": []})
    (flow,) = analyze(b.records).flows or []
    return flow_row(FlowItem(flow))


def test_a_field_the_schema_does_not_name_is_kept() -> None:
    row = {**a_flow_row(), "added_later": {"by": "show"}}
    assert TypeAdapter(FlowRow).validate_python(row) == row
    page = {"capture": "c", "filter": "", "total": 1, "matched": 1, "offset": 0, "more": False}
    page["flows"] = [row]  # type: ignore[assignment]
    assert TypeAdapter(FlowPage).validate_python(page) == page
    diff = {
        "a": "a", "b": "b", "same": True, "surface": [], "traffic": {}, "drift_a": [],
        "drift_b": [], "problems_a": ["line 3: not JSON"],
    }  # fmt: skip
    assert TypeAdapter(DiffResult).validate_python(diff) == diff
    schema = TypeAdapter(FlowRow).json_schema()
    assert schema.get("additionalProperties") is not False


def test_a_flow_row_schema_names_exactly_what_flow_row_sends() -> None:
    """FlowRow is built from show's FlowJson: every field of a real row is in the
    schema by name (not only let through as an extra), in show's order, and the
    schema names nothing a row lacks."""
    row = a_flow_row()
    schema = TypeAdapter(FlowRow).json_schema()
    shown = [field.name for field in msgspec.structs.fields(FlowJson)]
    assert list(schema["properties"]) == list(row) == [*shown, "violations", "worst"]
    assert set(schema["required"]) == set(row)
    assert TypeAdapter(FlowRow).validate_python(row) == row
