"""The public API for users' scripts: ``inspector.load(path)``."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpeek import inspector
from mcpeek.inspector.analysis import analyze
from mcpeek.inspector.capture import CaptureError
from mcpeek.inspector.testing.records import RecordBuilder


def test_load_gives_conversations_flows_and_messages(tmp_path: Path) -> None:
    b = RecordBuilder(modern=True)
    b.request("tools/call", {"name": "a", "arguments": {"x": 1}}, id=1)
    b.result(1, {"content": [{"type": "text", "text": "ok"}]})
    b.stderr("server log line")
    b.notify("notifications/tools/list_changed")
    capture = inspector.load(b.save(tmp_path / "c.jsonl"))
    assert capture.header.transport == "stdio"
    assert [c.era for c in capture.conversations] == ["modern"]
    assert [f.status for f in capture.flows] == ["complete", "notification"]
    assert [m.method for m in capture.messages] == [
        "tools/call",
        None,
        "notifications/tools/list_changed",
    ]
    request = capture.messages[0].message()
    assert request.params_value()["arguments"] == {"x": 1}
    assert capture.flow(1).msgs == [1, 2]
    assert len(capture.records) == 4 and capture.problems == []
    assert "3 messages, 2 flows" in repr(capture)


def test_load_refuses_what_is_not_a_capture(tmp_path: Path) -> None:
    bad = tmp_path / "x.jsonl"
    bad.write_text("not a capture\n")
    with pytest.raises(CaptureError):
        inspector.load(bad)


messages = st.fixed_dictionaries(
    {"jsonrpc": st.just("2.0")},
    optional={
        "id": st.integers(0, 5) | st.sampled_from(["1", "a", None]) | st.floats(0, 2),
        "method": st.sampled_from(
            [
                "tools/call",
                "notifications/progress",
                "notifications/cancelled",
                "subscriptions/listen",
                "initialize",
                "server/discover",
                "prompts/get",
            ]
        ),
        "params": st.fixed_dictionaries(
            {},
            optional={
                "name": st.sampled_from(["a", "b"]) | st.integers(),
                "progressToken": st.integers(0, 3) | st.text(max_size=2),
                "requestId": st.integers(0, 5) | st.none(),
                "requestState": st.text(max_size=3) | st.integers(),
                "inputResponses": st.dictionaries(st.text(max_size=3), st.none(), max_size=2)
                | st.integers(),
                "_meta": st.fixed_dictionaries(
                    {},
                    optional={
                        "progressToken": st.integers(0, 3) | st.lists(st.integers()),
                        "io.modelcontextprotocol/protocolVersion": st.sampled_from(
                            ["2026-07-28", "2025-11-25", 7]
                        ),
                        "io.modelcontextprotocol/subscriptionId": st.integers(0, 5) | st.none(),
                    },
                )
                | st.integers(),
            },
        )
        | st.lists(st.integers(), max_size=2)
        | st.none(),
        "result": st.fixed_dictionaries(
            {},
            optional={
                "resultType": st.sampled_from(["complete", "input_required", 3]),
                "requestState": st.text(max_size=3),
                "inputRequests": st.dictionaries(st.text(max_size=3), st.none(), max_size=2),
                "tools": st.lists(st.fixed_dictionaries({"name": st.text(max_size=3)}), max_size=2)
                | st.integers(),
            },
        )
        | st.none()
        | st.integers(),
        "error": st.fixed_dictionaries({}, optional={"code": st.integers(-32700, -32000)}),
    },
)


@given(
    st.lists(
        st.tuples(st.sampled_from(["c2s", "s2c"]), messages | st.binary(max_size=20)), max_size=40
    )
)
@settings(max_examples=300, deadline=None)
def test_the_analyzer_never_raises(items: list[tuple[str, object]]) -> None:
    b = RecordBuilder()
    for direction, item in items:
        if isinstance(item, bytes):
            b.raw(item, direction)
        else:
            b.send(item, direction)  # type: ignore[arg-type]
        b.wait(30)
    analyzer = analyze(b.records, timeout=60)
    assert analyzer.flows is not None
    seqs = sorted(seq for flow in analyzer.flows for seq in flow.msgs)
    # every message belongs to exactly one flow (batch members share their record's seq)
    assert set(seqs) == {r.seq for r in b.records[1:]}
