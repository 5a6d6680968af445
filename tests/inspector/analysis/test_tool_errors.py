"""A tool that failed (``isError: true``) is a ``tool-error`` flow, not a success."""

from __future__ import annotations

import pytest

from mcpeek.inspector.analysis import analyze
from mcpeek.inspector.analysis.flow import Flow
from mcpeek.inspector.filters import compile_filter, filter_rows
from mcpeek.inspector.testing.records import RecordBuilder
from mcpeek.inspector.views.flowline import flow_json, flow_text
from mcpeek.inspector.views.session import SessionModel

FAILED = {"content": [{"type": "text", "text": "no such city"}], "isError": True}


def flows_of(b: RecordBuilder) -> list[Flow]:
    flows = analyze(b.records).flows
    assert flows is not None
    return flows


@pytest.mark.parametrize("modern", [False, True])
def test_a_failed_tool_call_has_its_own_status(modern: bool) -> None:
    b = RecordBuilder(modern=modern)
    b.request("tools/call", {"name": "get_weather"}, id=1)
    b.result(1, FAILED)
    b.request("tools/call", {"name": "get_weather"}, id=2)
    b.result(2, {"content": [], "isError": False})
    assert [f.status for f in flows_of(b)] == ["tool-error", "complete"]


def test_the_last_round_of_a_chain_decides() -> None:
    b = RecordBuilder(modern=True)
    b.request("tools/call", {"name": "deploy"}, id=1)
    b.input_required(1, state="s")
    b.request("tools/call", {"name": "deploy", "requestState": "s"}, id=2)
    b.result(2, FAILED)
    (flow,) = flows_of(b)
    assert flow.status == "tool-error" and flow.chain == [1, 2]


def test_only_a_true_is_error_of_a_tool_call_counts() -> None:
    b = RecordBuilder()
    b.request("tools/call", {"name": "t"}, id=1)
    b.result(1, {"content": [], "isError": "true"})  # not a boolean: the rules' business
    b.request("prompts/get", {"name": "p"}, id=2)
    b.result(2, {"messages": [], "isError": True})  # isError means nothing here
    assert [f.status for f in flows_of(b)] == ["complete", "complete"]


def test_show_lines_and_objects_say_tool_error() -> None:
    b = RecordBuilder()
    b.request("tools/call", {"name": "get_weather"}, id=7)
    b.result(7, FAILED)
    (flow,) = flows_of(b)
    assert "get_weather  id 7  ← tool-error" in flow_text(flow)
    assert flow_json(flow).status == "tool-error"


def test_the_session_summary_counts_tool_errors_and_a_filter_finds_them() -> None:
    b = RecordBuilder()
    for id, result in ((1, FAILED), (2, {"content": []}), (3, FAILED)):
        b.request("tools/call", {"name": f"t{id}"}, id=id)
        b.result(id, result)
    model = SessionModel("x.jsonl")
    model.feed(b.records)
    model.finish()
    assert model.summary()["tool_errors"] == 2
    rows = filter_rows(compile_filter("~s tool-error"), model.items)
    assert [model.items[row].flow.name for row in rows] == ["t1", "t3"]
    assert list(filter_rows(compile_filter("~s ok"), model.items)) == [1]
