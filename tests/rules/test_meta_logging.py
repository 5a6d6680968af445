"""Per-request logging: meta.log-without-level."""

from __future__ import annotations

import json

from mcpeek.inspector.testing.records import RecordBuilder, modern_meta
from tests.rules.test_meta import LEVEL, found
from tests.rules.test_results import answer, discovered


# -- meta.log-without-level ----------------------------------------------------------------
def test_log_for_a_request_that_did_not_ask() -> None:
    b = discovered()
    b.request("tools/call", {"name": "t"}, id=1)
    request = b.last.seq
    b.notify("notifications/message", {"level": "info", "data": "x"})
    log = b.last.seq
    answer(b, 1, {"content": []})
    [v] = found(b.records, "meta.log-without-level")
    assert v.msgs == [request, log]
    # the analysis leaves the log on its own (nothing ties it to the call), but
    # the finding still names the only request that could have asked for it
    assert "tools/call (id 1) was in flight, whose request set no" in v.message


def test_log_for_a_request_that_asked() -> None:
    b = discovered()
    b.request("tools/call", {"name": "t"}, id=1, meta={LEVEL: "debug"})
    b.notify("notifications/message", {"level": "info", "data": "x"})
    answer(b, 1, {"content": []})
    b.notify("notifications/message", {"level": "info", "data": "late"})  # after the answer
    assert found(b.records, "meta.log-without-level") == []


def test_log_with_no_request_in_flight() -> None:
    b = discovered()
    b.notify("notifications/message", {"level": "info", "data": "server started"})
    log = b.last.seq
    [v] = found(b.records, "meta.log-without-level")
    assert v.msgs == [log]
    assert "no request in flight" in v.message


def test_log_among_several_requests_in_flight() -> None:
    b = discovered()
    b.request("tools/call", {"name": "a"}, id=1)
    b.request("tools/call", {"name": "b"}, id=2)
    b.notify("notifications/message", {"level": "info", "data": "x"})  # whose? neither asked
    b.request("tools/call", {"name": "c"}, id=3, meta={LEVEL: "info"})
    b.notify("notifications/message", {"level": "info", "data": "y"})  # may be for id 3
    for id in (1, 2, 3):
        answer(b, id, {"content": []})
    [v] = found(b.records, "meta.log-without-level")
    assert "none of the 2 requests in flight" in v.message


def test_log_on_a_listen_stream_is_another_rules_business() -> None:
    b = discovered()
    b.request("subscriptions/listen", {"notifications": {}}, id="L")
    sub = {"_meta": {"io.modelcontextprotocol/subscriptionId": "L"}}
    b.notify("notifications/subscriptions/acknowledged", sub)
    b.notify("notifications/message", {"level": "info", "data": "x", **sub})
    assert found(b.records, "meta.log-without-level") == []


def test_logs_on_http_streams_belong_to_their_own_request() -> None:
    b = RecordBuilder("http", modern=True)
    b.http("x1", "request", method="POST", path="/mcp", headers=[])
    b.request("tools/call", {"name": "quiet"}, id=1, ch="x1")
    quiet = b.last.seq
    b.http("x1", "response", status=200, headers=[("content-type", "text/event-stream")])
    b.http("x2", "request", method="POST", path="/mcp", headers=[])
    b.request("tools/call", {"name": "chatty"}, id=2, ch="x2", meta={LEVEL: "info"})
    b.http("x2", "response", status=200, headers=[("content-type", "text/event-stream")])
    b.notify("notifications/message", {"level": "info", "data": "ok"}, ch="x2")
    b.notify("notifications/message", {"level": "info", "data": "not asked"}, ch="x1")
    log = b.last.seq
    for id, ch in ((2, "x2"), (1, "x1")):
        b.send({"jsonrpc": "2.0", "id": id, "result": {"resultType": "complete"}}, "s2c", ch)
        b.http(ch, "end", reason="complete")
    [v] = found(b.records, "meta.log-without-level")
    assert v.msgs == [quiet, log]


def test_a_request_whose_meta_the_peek_cannot_read_is_judged_by_its_careful_decode() -> None:
    # A duplicate _meta (the last one wins, as in most JSON parsers) names a level: no
    # log-without-level finding, and deprecated.feature still sees the level asked for.
    b = discovered()
    meta = json.dumps(modern_meta(**{LEVEL: "info"}))
    head = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","_meta":"x",'
    b.raw(head + '"_meta":' + meta + "}}")
    request = b.last.seq
    b.notify("notifications/message", {"level": "info", "data": "x"})
    answer(b, 1, {"content": []})
    assert found(b.records, "meta.log-without-level") == []
    asked = [v for v in found(b.records, "deprecated.feature") if "logLevel" in v.message]
    assert [v.msgs for v in asked] == [[request]]


def test_a_log_after_a_probe_that_set_no_level_is_reported() -> None:
    # (the rule now knows the level of requests sent before the era was known)
    b = RecordBuilder(modern=True)
    b.raw('{"jsonrpc":"2.0","id":1,"method":"server/discover"}')
    answer(b, 1, {"supportedVersions": ["2026-07-28"], "capabilities": {"logging": {}}})
    b.notify("notifications/message", {"level": "info", "data": "hi"})
    log = b.last.seq
    [v] = found(b.records, "meta.log-without-level")
    assert v.msgs == [log] and "no request in flight" in v.message
