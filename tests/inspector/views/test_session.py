"""SessionModel: flows as rows in start order, violations attached, changes handed out once."""

from __future__ import annotations

from mcpeek.inspector.records import Violation
from mcpeek.inspector.testing.records import RecordBuilder
from mcpeek.inspector.views.session import SessionModel


def violation(seqs: list[int], severity: str = "error", rule: str = "x.y") -> Violation:
    return Violation(rule=rule, severity=severity, msgs=seqs, message="m", spec="")


def test_rows_follow_flow_start_and_changes_are_reported_once() -> None:
    b = RecordBuilder()
    b.request("tools/call", {"name": "a"}, id=1)
    b.request("tools/call", {"name": "b"}, id=2)
    model = SessionModel("x.jsonl")
    model.feed(b.records)
    changes = model.take_changes()
    assert changes.added == 2 and not changes.changed
    assert [item.flow.name for item in model.items] == ["a", "b"]
    assert not model.take_changes()  # nothing new since

    done = len(b.records)
    b.result(1, {"content": []})
    model.feed(b.records[done:])
    changes = model.take_changes()
    assert changes.added == 0 and changes.changed == frozenset({0})
    assert model.items[0].flow.status == "complete"
    assert model.items[1].flow.status == "pending"


def test_violations_attach_to_the_flow_of_their_last_message() -> None:
    b = RecordBuilder()
    first = b.request("tools/call", {"name": "a"}, id=1)
    second = b.request("tools/call", {"name": "b"}, id=2)
    b.add(violation([first.seq, second.seq], "warning"))
    b.add(violation([first.seq], "info"))
    b.add(violation([first.seq], "error"))
    model = SessionModel("x.jsonl")
    model.feed(b.records)
    assert [f.severity for f in model.items[1].findings] == ["warning"]
    assert model.items[0].worst == "error" and len(model.items[0].findings) == 2
    assert len(model.findings) == 3 and model.take_changes().findings

    model.set_findings([violation([second.seq], "info", "other.rule")])
    assert model.items[0].findings == [] and model.items[0].worst is None
    assert [f.rule for f in model.items[1].findings] == ["other.rule"]
    assert model.items[1].worst == "info"


def test_summary_names_era_peers_and_tools() -> None:
    b = RecordBuilder(modern=True)
    b.request("server/discover", {}, id=1)
    b.result(1, {"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}}})
    b.request("tools/list", {}, id=2)
    b.result(2, {"tools": [{"name": "add", "inputSchema": {"type": "object"}}]})
    b.event("exit", code=0)
    model = SessionModel("x.jsonl")
    model.feed(b.records)
    model.finish()
    summary = model.summary()
    assert model.ended and summary["flows"] == 2 and summary["transport"] == "stdio"
    (conversation,) = summary["conversations"]
    assert conversation["era"] == "modern" and conversation["tools"] == ["add"]
    assert conversation["client_info"] == {"name": "test-client", "version": "1.0"}


def test_an_http_proxy_says_where_clients_reach_it() -> None:
    b = RecordBuilder("http")
    b.header.target = "https://mcp.example.com/v1/mcp"
    b.event("listen", addr="127.0.0.1:6280")
    model = SessionModel("x.jsonl")
    assert model.proxy_url is None
    model.feed(b.records)
    assert model.proxy_url == "http://127.0.0.1:6280/v1/mcp"
