"""The tools' output schemas pass on what they do not name.

The SDK validates each structured answer against its tool's schema and would
drop a field the schema does not list: a field ``show``, ``lint`` or ``diff``
print in a later version must still reach the client, or the answers would no
longer be what the CLI prints.
"""

from __future__ import annotations

from pydantic import TypeAdapter

from mcpeek.inspector.assist.schemas import DiffResult, FlowPage, FlowRow


def test_a_field_the_schema_does_not_name_is_kept() -> None:
    row = {
        "flow": 1, "method": "tools/list", "name": None, "ids": [1], "status": "complete",
        "latency_ms": 1.0, "msgs": [1, 2], "chain": [], "era": "modern",
        "conversation": "stdio", "progress": 0, "late": False, "violations": 0, "worst": None,
        "added_later": {"by": "show"},
    }  # fmt: skip
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
