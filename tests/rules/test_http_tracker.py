"""The ``http.*`` rules of an engine share one exchange tracker, which the engine feeds.

:class:`~mcpeek.rules.families._http_tracker.ExchangeTracker` follows every
exchange once for all the HTTP rules; the engine gives it every ``http`` record
and HTTP message before the rules, so a rule is called only on what it judges.
These tests pin that sharing, and that a rule left out of the records and
messages it does not judge still knows its exchanges.
"""

from __future__ import annotations

import pytest

from mcpeek.inspector.analysis import Analyzer
from mcpeek.inspector.records import Http, Msg, Record
from mcpeek.rules.engine import Reported, RuleEngine
from mcpeek.rules.families._http_exchanges import HttpRule
from mcpeek.rules.families._http_tracker import ExchangeTracker
from mcpeek.rules.families.http import HttpAccept
from mcpeek.rules.families.http_status import HttpErrorStatus, HttpNotificationStatus
from mcpeek.rules.testing import lint_records
from tests.rules.test_http import ACCEPT, JSON_CT, Wire, modern_conversation


def test_the_http_rules_of_an_engine_share_one_tracker() -> None:
    one, other = RuleEngine(lambda _: None), RuleEngine(lambda _: None)
    trackers = {id(rule.tracker) for rule in one.rules if isinstance(rule, HttpRule)}
    assert len(trackers) == 1
    theirs = {id(rule.tracker) for rule in other.rules if isinstance(rule, HttpRule)}
    assert theirs.isdisjoint(trackers)  # per engine: never shared between two


def test_a_rule_called_only_on_server_errors_knows_the_exchange_and_its_status() -> None:
    # http.error-status alone: the engine calls it neither on request records nor on
    # the client's messages, and the tracker it reads still followed them.
    w = modern_conversation()
    unknown = w.post("foo/bar", id=5, error=(-32601, "no such method"))
    (v,) = lint_records(w.records, rules=[HttpErrorStatus])
    assert v.rule == "http.error-status"
    assert v.msgs == [unknown["msg"], unknown["answer"], unknown["resp"]]
    assert "sent with HTTP 200; it MUST be 404" in v.message


def test_a_rule_counts_the_server_messages_it_is_not_called_on() -> None:
    # A notification POST answered 202 with a message in its body: only the tracker
    # sees the server's message record (http.notification-status is called on none).
    w = Wire()
    b = w.b
    b.http("x1", "request", method="POST", path="/mcp", headers=[ACCEPT, JSON_CT])
    sent = b.notify("notifications/initialized", dir="c2s", ch="x1")
    b.http("x1", "response", status=202, headers=[JSON_CT])
    b.send({"jsonrpc": "2.0", "method": "notifications/message", "params": {}}, "s2c", "x1")
    b.http("x1", "end", reason="complete")
    (v,) = lint_records(w.records, rules=[HttpNotificationStatus])
    assert "answered 202 with a body; it MUST have none" in v.message
    assert v.msgs[0] == sent.seq


class _Counting(HttpAccept):
    """http.accept, counting the hooks the engine calls (registered under no id)."""

    id = ""
    calls = 0

    def on_message(self, ctx):  # type: ignore[no-untyped-def]
        type(self).calls += 1
        return super().on_message(ctx)

    def on_record(self, record, conversation):  # type: ignore[no-untyped-def]
        type(self).calls += 1
        return super().on_record(record, conversation)


def test_a_client_side_rule_is_not_called_on_the_server_messages_nor_every_record() -> None:
    w = Wire()
    w.post("tools/list", id=1, result={"tools": []})
    records: list[Record] = w.records
    _Counting.calls = 0
    found: list[Reported] = []
    analyzer = Analyzer([RuleEngine(found.append, rules=[_Counting])])
    analyzer.feed_all(records)
    analyzer.finish()
    # the response record that judges the client's request; not the request itself (the
    # tracker keeps it for the head: the rule has nothing to do then), not the request
    # or end records, nor the server's result
    assert _Counting.calls == 1


def test_the_rules_that_read_the_tracker_are_not_called_on_a_message_it_keeps() -> None:
    w = Wire()
    w.post("tools/list", id=1, result={"tools": []})
    engine = RuleEngine(lambda _: None)
    analyzer = Analyzer([engine])
    analyzer.feed_all(w.records)
    readers = {rule for rule in engine.rules if isinstance(rule, HttpRule)}
    (request,) = [key for key in engine._index.message if key[0] == "request"]
    row = engine._index.message[request]
    if row.variants is not None:  # (by the facts of the request: none here)
        row = row.variants[0]
    assert readers & {rule for rule, _ in row.every}  # (the request's rules, in general)
    (tracker,) = row.followers
    assert tracker.readers == readers
    # what the engine ran on it: the other rules only (the tracker kept it)
    kept = row.without_readers(row.every, (tracker,))
    assert kept and not readers & {rule for rule, _ in kept}


def test_rules_that_remember_http_requests_are_not_called_on_other_phases() -> None:
    engine = RuleEngine(lambda _: None)
    phases = engine._index.record_rules((Http, False, "*")).phases
    assert phases is not None
    called = {phase: {rule.id for rule in rules} for phase, rules in phases.items()}
    assert "id.null" in called["request"] and "id.null" not in called["response"]
    assert "lifecycle.version-mismatch" in called["end"]
    assert "lifecycle.version-mismatch" not in called["response"]
    # a POST's request record (the tracker tells it apart): not the rule of GET and DELETE
    assert {"id.null", "lifecycle.version-mismatch"} <= called["post-request"]
    assert "http.session-missing" in called["request"]
    assert "http.session-missing" not in called["post-request"]


def test_the_tracker_tells_a_posts_request_record_apart() -> None:
    tracker = ExchangeTracker()
    post = Http(seq=1, t=0.0, x="x1", phase="request", method="post", path="/mcp")
    get = Http(seq=2, t=0.0, x="x2", phase="request", method="GET", path="/mcp")
    assert tracker.on_record(post) == "post-request"
    assert tracker.on_record(get) is None


def test_a_tracker_that_raises_is_reported_as_a_crash_and_the_checks_go_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The shared state is the rules' code: its bug must not stop the analysis (nor,
    # live, the traffic), any more than a rule's does.
    def broken(self: ExchangeTracker, *args: object) -> None:
        raise KeyError("boom")

    monkeypatch.setattr(ExchangeTracker, "on_record", broken)
    monkeypatch.setattr(ExchangeTracker, "on_message", broken)
    w = modern_conversation()
    w.post("tools/list", id=7, result={"tools": []})
    found: list[Reported] = []
    analyzer = Analyzer([RuleEngine(found.append)])
    analyzer.feed_all(w.records)
    analyzer.finish()
    crashes = [v for v in found if v.rule == "inspector.rule-crashed"]
    assert crashes and all("ExchangeTracker raised KeyError" in v.message for v in crashes)
    # reported on every record it was given (each http record, each message), and
    # given every one: a crash on one did not stop the engine feeding it the next
    given = {r.seq for r in w.records if isinstance(r, (Http, Msg))}
    assert {v.msgs[0] for v in crashes} == given


def test_the_tracker_refreshes_its_memories_as_often_as_they_change() -> None:
    # note() skips a refresh of what it refreshed last: the newest entries stay right
    # however conversations and endpoints alternate.
    from types import SimpleNamespace

    tracker = ExchangeTracker()

    def note(key: str, era: str | None, path: str) -> None:
        exchange = SimpleNamespace(method="POST", path=path, status=200, s2c=1)
        ctx = SimpleNamespace(
            conversation=SimpleNamespace(key=key), era=era, entry=SimpleNamespace(dir="c2s")
        )
        ctx.kind = "request"
        tracker.note(ctx, exchange)  # type: ignore[arg-type]

    note("a", "modern", "/mcp")
    note("b", "legacy", "/other")
    note("a", "modern", "/mcp")
    assert list(tracker.eras.items()) == [("b", "legacy"), ("a", "modern")]
    assert list(tracker.endpoints) == ["/other", "/mcp"]
    note("a", "legacy", "/mcp")
    assert list(tracker.eras.items()) == [("b", "legacy"), ("a", "legacy")]


def test_an_exchange_knows_its_headers_and_media_type_once_they_come() -> None:
    from mcpeek.rules.families._http_exchange_state import Exchange

    exchange = Exchange(
        Http(seq=1, t=0.0, x="x1", phase="request", method="post", headers=[("Accept", "a")])
    )
    assert exchange.method == "POST" and exchange.headers == {"accept": "a"}
    assert exchange.resp_headers == {} and exchange.content_type is None
    head = [("Content-Type", "Text/Event-Stream; charset=utf-8"), ("mcp-session-id", "s")]
    exchange.respond(Http(seq=2, t=0.0, x="x1", phase="response", status=200, headers=head))
    assert exchange.content_type == "text/event-stream"
    assert exchange.session_key == "http:session:s"
    plain = [("content-type", "application/json")]
    exchange.respond(Http(seq=3, t=0.0, x="x1", phase="response", status=200, headers=plain))
    assert exchange.content_type == "application/json" and exchange.resp_headers == dict(plain)
