"""A small analysed modern capture, as a viewer's rows, for the filter tests.

Each row has a label (see ``LABELS``) so tests can say which rows a filter
keeps: ``rows("~s error") == {"summarise"}``.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from mcpeek.inspector.filters import compile_filter, filter_rows
from mcpeek.inspector.records import Violation
from mcpeek.inspector.testing.records import RecordBuilder
from mcpeek.inspector.views.session import FlowItem, SessionModel

Rows = Callable[[str], set[str]]


def violation(rule: str, severity: str, seq: int) -> Violation:
    return Violation(rule=rule, severity=severity, msgs=[seq], message="bad", spec="https://x")


def build_session() -> SessionModel:
    b = RecordBuilder(modern=True)
    # latte: a lone log notification, not UTF-8 (nothing in flight to own it)
    b.raw(
        b'{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"caf\xe9 latte"}}',
        dir="s2c",
    )
    # weather: a tool call with progress, 150 ms, a warning
    b.request(
        "tools/call",
        {"name": "get_weather", "arguments": {"city": "Paris"}},
        id=1,
        meta={"progressToken": "p1"},
    )
    b.notify("notifications/progress", {"progressToken": "p1", "progress": 1})
    b.wait(0.15)
    answer = b.result(1, {"content": [{"type": "text", "text": "Temperature: 21 C"}]})
    b.add(violation("result.result-type-missing", "warning", answer.seq))
    # list: quick, an info finding
    listed = b.request("tools/list", id=2)
    b.result(2, {"tools": []})
    b.add(violation("meta.client-info-missing", "info", listed.seq))
    # summarise: a prompt that fails, with an error finding; a string id
    b.request("prompts/get", {"name": "summarise"}, id="abc")
    failed = b.error("abc", -32602, "no such prompt")
    b.add(violation("error.code-reserved", "error", failed.seq))
    # notes: a resource read nobody answers
    b.request("resources/read", {"uri": "file:///tmp/notes.txt"}, id=4)
    # sampling: the server asks the client
    b.request("sampling/createMessage", {"messages": []}, id=7, dir="s2c")
    b.result(7, {"role": "assistant"}, dir="c2s")
    # deploy: a multi round-trip chain 10 -> 11
    b.request("tools/call", {"name": "deploy", "arguments": {}}, id=10)
    b.input_required(10, state="s1", requests={"who": {"method": "elicitation/create"}})
    b.request(
        "tools/call",
        {
            "name": "deploy",
            "arguments": {},
            "requestState": "s1",
            "inputResponses": {"who": {"action": "accept"}},
        },
        id=11,
    )
    b.result(11, {"content": []})
    # slow: cancelled by the client
    b.request("tools/call", {"name": "slow_tool", "arguments": {}}, id=12)
    b.notify("notifications/cancelled", {"requestId": 12}, dir="c2s")
    # ask: a chain left waiting for its retry
    b.request("prompts/get", {"name": "ask"}, id=20)
    b.input_required(20, state="x")
    # an answer to nothing
    b.result(99, {})
    model = SessionModel("sample.jsonl")
    model.feed(b.records)
    model.finish()
    return model


def label(item: FlowItem) -> str:
    flow = item.flow
    if flow.name:
        return flow.name.rsplit("/", 1)[-1]
    if flow.method == "notifications/message":
        return "latte"
    return flow.method or flow.status


@pytest.fixture(scope="module")
def session() -> SessionModel:
    model = build_session()
    by_label = {label(item): item for item in model.items}
    by_label["sampling/createMessage"].marked = True
    by_label["get_weather"].comment = "Flaky on Mondays"
    return model


@pytest.fixture(scope="module")
def rows(session: SessionModel) -> Rows:
    """The labels of the rows a filter keeps (checked both ways: call and filter_rows)."""

    def run(text: str) -> set[str]:
        flt = compile_filter(text)
        called = {label(item) for item in session.items if flt(item)}
        listed = {label(session.items[row]) for row in filter_rows(flt, session.items)}
        assert called == listed, text
        return called

    return run
