"""The HTTP rules judge a client's message when its exchange's response head arrives.

The Analyzer correlates a request as soon as it is recorded (so that a call the
server holds is in flight), which for a server that sends its head only when the
call is done is long before the status and headers most ``http.*`` rules check.
:class:`~mcpeek.rules.families._http_exchanges.HttpRule` keeps the message with its
exchange until then; these tests pin what is found, and on which message, when the
head comes later, or never.
"""

from __future__ import annotations

from mcpeek.inspector.analysis import Analyzer
from mcpeek.rules.engine import Reported, RuleEngine
from mcpeek.rules.testing import fired as found_all
from tests.rules.test_http import CACHE, JSON_CT, SQL_TOOL, Wire, family, found

RESPONSE_RULES = ("http.content-type", "http.error-status", "http.session-id", "http.sse-request")


def test_a_finding_on_a_message_whose_head_came_later_names_that_message() -> None:
    w = Wire()
    seqs = w.post("tools/list", id=7, resp_headers=[("content-type", "text/html")], result={})
    assert seqs["msg"] < seqs["resp"]  # recorded as the relay does: the body first
    (late,) = found(w.records, "http.content-type")
    assert late.msgs == [seqs["req"], seqs["msg"], seqs["resp"]]
    assert (late.conversation, late.era) == ("http:origin", "modern")
    # a finding whose offending message is the client's own: its method, id and bytes
    seqs = w.post("ping", id=8, drop=("mcp-method",), result={})
    (client,) = found(w.records, "http.method-header")
    assert client.msgs[-1] == seqs["msg"]
    assert (client.method, client.msg_id, client.conversation) == ("ping", 8, "http:origin")
    assert '"ping"' in client.excerpt


def test_the_message_keeps_its_bytes_when_its_flow_expired_before_the_head() -> None:
    # A streaming analysis forgets an ended flow's bytes; a call unanswered past the
    # timeout ended before its head came, and its finding still shows the message.
    w = Wire()
    w.n += 1
    headers = [h for h in w.headers_for("ping", None) if h[0] != "mcp-method"]
    w.b.http("x1", "request", method="POST", path="/mcp", headers=headers)
    sent = w.b.request("ping", id=1, ch="x1")
    w.b.wait(5.0)
    w.b.http("x1", "response", status=200, headers=[("content-type", "text/html")])
    w.b.http("x1", "end", reason="complete")
    reported: list[Reported] = []
    analyzer = Analyzer([RuleEngine(reported.append)], timeout=1.0)
    analyzer.feed_all(w.records)
    analyzer.finish()
    (late,) = [v for v in reported if v.rule == "http.method-header"]
    assert late.msgs[-1] == sent.seq and '"ping"' in late.excerpt


def test_a_client_that_gave_up_is_judged_on_its_request_alone() -> None:
    w = Wire()
    w.b.http("x1", "request", method="POST", path="/mcp", headers=[JSON_CT])
    sent = w.b.request("tools/list", id=1, ch="x1")
    w.b.http("x1", "end", reason="client-closed")
    rules = {v.rule: v for v in family(w.records)}
    assert rules["http.accept"].msgs[-1] == sent.seq  # the client's own headers
    assert rules["http.method-header"].msgs[-1] == sent.seq
    assert not set(RESPONSE_RULES) & set(rules)  # no server answered: none is blamed


def test_an_exchange_mcpeek_answered_judges_the_request_not_a_server() -> None:
    w = Wire()
    w.b.http("x1", "request", method="POST", path="/mcp", headers=[JSON_CT])
    sent = w.b.request("tools/list", id=1, ch="x1")
    w.b.http("x1", "response", status=502, headers=[("content-type", "text/plain")], by_proxy=True)
    w.b.http("x1", "end", reason="complete")
    rules = {v.rule: v for v in family(w.records)}
    assert rules["http.method-header"].msgs[-1] == sent.seq
    assert not set(RESPONSE_RULES) & set(rules)


def test_a_capture_that_ends_before_the_head_judges_the_request() -> None:
    w = Wire()
    w.b.http("x1", "request", method="POST", path="/mcp", headers=[JSON_CT])
    sent = w.b.request("tools/list", id=1, ch="x1")
    (missing,) = found(w.records, "http.method-header")
    assert missing.msgs[-1] == sent.seq and missing.method == "tools/list"


def test_a_kept_message_is_the_same_message_to_the_other_rules() -> None:
    # The engine shares one context per message with every rule: an HTTP rule that
    # keeps it for later must not change it under the rules that judge it now.
    w = Wire()
    w.post("tools/list", id=1, result={"tools": [SQL_TOOL], **CACHE})
    arguments = {"region": None, "query": "q"}
    seqs = w.post("tools/call", {"name": "execute_sql", "arguments": arguments}, id=2, result={})
    (invalid,) = found_all(w.records, "tools.input-schema")
    assert invalid.msgs[-1] == seqs["msg"]
