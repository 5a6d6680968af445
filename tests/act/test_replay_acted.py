"""Replay of a capture where mcpeek acted: what it answered in place is not sent again,
and an answer it made is not compared with the server's."""

from __future__ import annotations

from mcpeek.inspector.analysis import analyze
from mcpeek.inspector.records import Act
from mcpeek.inspector.replay.replay_plan import ClientStep, build_plan
from mcpeek.inspector.testing.records import RecordBuilder


def test_requests_answered_in_place_are_not_replayed_nor_made_answers_compared() -> None:
    b = RecordBuilder()
    b.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}}, id=1)
    b.result(1, {"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {}})
    answered = b.request("tools/call", {"name": "add", "arguments": {}}, id=2)
    b.add(Act(action="reply", dir="c2s", ch="stdio", by="fault", raw=answered.raw))
    b.result(2, {"content": []}).made = "reply"  # mcpeek's answer: the server never saw it
    edited = b.request("tools/call", {"name": "sub", "arguments": {}}, id=3)
    b.result(3, {"content": [{"type": "text", "text": "edited"}]}).made = "edit"
    b.request("ping", {}, id=4)
    b.result(4, {})
    plan = build_plan(b.records, analyze(b.records).flows or [], "stdio")
    sent = [s.seq for s in plan.steps if isinstance(s, ClientStep)]
    assert answered.seq not in sent and edited.seq in sent  # the edited call reached it
    assert [f.method for f in plan.flows] == ["initialize", "ping"]
    assert any("answered by mcpeek in place" in note for note in plan.notes)
    assert any("made by mcpeek: not compared" in note for note in plan.notes)
