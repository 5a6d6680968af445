"""Real-world traffic that mcpeek judged wrong (issue #15): correlation and its rules."""

from __future__ import annotations

import json
from typing import Any

from mcpeek.inspector.analysis import analyze
from mcpeek.inspector.testing.records import RecordBuilder, modern_meta
from mcpeek.rules.testing import lint_records
from tests.rules.test_envelope import initialize
from tests.rules.test_http import CACHE, JSON_CT, MODERN, NO_BUFFER, SSE_CT, Wire


# -- id.null on an error nobody asked for ----------------------------------------------------
def test_no_id_null_for_the_error_body_of_a_get_answered_405() -> None:
    w = Wire(modern=False)
    w.initialize()
    w.n += 1
    b, x = w.b, f"x{w.n}"
    b.http(x, "request", method="GET", path="/mcp", headers=[("accept", "text/event-stream")])
    b.http(x, "response", status=405, headers=[JSON_CT])
    b.send({"jsonrpc": "2.0", "id": None, "error": {"code": -32000, "message": "no"}}, "s2c", x)
    b.http(x, "end", reason="complete")
    assert [v.rule for v in lint_records(w.records) if v.rule == "id.null"] == []


# -- request.unanswered after the timeout ----------------------------------------------------
def test_a_request_answered_after_the_timeout_is_reported() -> None:
    b = RecordBuilder(modern=True)
    b.request("server/discover", id=1)
    b.result(1, {"supportedVersions": ["2026-07-28"], "capabilities": {}})
    request = b.request("tools/call", {"name": "slow"}, id=2)
    b.wait(61)
    b.result(2, {"content": []})
    (v,) = [v for v in lint_records(b.records, timeout=60) if v.rule == "request.unanswered"]
    assert v.msgs == [request.seq] and "within the timeout" in v.message


# -- a Streamable HTTP origin that issues no session id --------------------------------------
def _exchange(
    w: Wire, method: str, params: dict[str, Any] | None, id: int, token: str | None = None
) -> str:
    """A POST whose request stays in flight (its exchange open, no answer yet)."""
    w.n += 1
    x = f"x{w.n}"
    w.b.http(x, "request", method="POST", path="/mcp", headers=w.headers_for(method, params))
    w.b.request(method, params, id=id, ch=x, meta={"progressToken": token} if token else None)
    w.b.http(x, "response", status=200, headers=[SSE_CT, NO_BUFFER])
    return x


def _progress(w: Wire, x: str, token: str, value: int) -> None:
    params = {"progressToken": token, "progress": value}
    w.b.notify("notifications/progress", params, ch=x)


def test_a_cancellation_posted_alone_names_a_request_of_another_exchange() -> None:
    w = Wire()
    x = _exchange(w, "tools/call", {"name": "slow"}, 7)
    w.post("notifications/cancelled", {"requestId": 7}, notify=True, status=202)
    w.b.http(x, "end", reason="complete")
    rules = [v.rule for v in lint_records(w.records)]
    assert "cancel.unknown-request" not in rules and "request.unanswered" not in rules


def test_a_cancellation_that_two_clients_requests_could_mean_is_not_guessed() -> None:
    w = Wire()
    first = _exchange(w, "tools/call", {"name": "a"}, 7)
    second = _exchange(w, "tools/call", {"name": "b"}, 7)
    w.post("notifications/cancelled", {"requestId": 7}, notify=True, status=202)
    w.b.result(7, {"content": []}, ch=first)
    w.b.result(7, {"content": []}, ch=second)
    for x in (first, second):
        w.b.http(x, "end", reason="complete")
    rules = [v.rule for v in lint_records(w.records)]
    assert "cancel.unknown-request" not in rules and "cancel.response-after-cancel" not in rules


def test_two_legacy_clients_then_a_modern_client_on_one_origin() -> None:
    w = Wire(modern=False)
    for _ in range(2):
        w.initialize(session=None)
        w.post("tools/list", id=1, result={"tools": []})
    w.modern = w.b.modern = True
    w.version = MODERN
    discovered = {"supportedVersions": [MODERN], "capabilities": {"tools": {}}, **CACHE}
    w.post("server/discover", id=1, result=discovered)
    w.post("tools/list", id=2, result={"tools": [], **CACHE})
    assert [v.rule for v in lint_records(w.records) if v.rule.startswith("lifecycle.")] == []


def test_two_clients_with_the_same_progress_token() -> None:
    w = Wire()
    first = _exchange(w, "tools/call", {"name": "a"}, 1, token="p")
    second = _exchange(w, "tools/call", {"name": "b"}, 1, token="p")
    for value in (1, 2):
        _progress(w, first, "p", value)
        _progress(w, second, "p", value)
    for x in (first, second):
        w.b.result(1, {"content": []}, ch=x)
        w.b.http(x, "end", reason="complete")
    rules = [v.rule for v in lint_records(w.records)]
    assert "progress.not-increasing" not in rules and "progress.unknown-token" not in rules


# -- version gating by field history ---------------------------------------------------------
def _output_schema_session(version: str) -> RecordBuilder:
    b = RecordBuilder()
    initialize(b, version)
    schema = {"type": "object", "properties": {"t": {"type": "number"}}, "required": ["t"]}
    tool = {"name": "temp", "inputSchema": {"type": "object"}, "outputSchema": schema}
    b.request("tools/list", id=1)
    b.result(1, {"tools": [tool]})
    b.request("tools/call", {"name": "temp", "arguments": {}}, id=2)
    b.result(2, {"content": [{"type": "text", "text": "20"}]})  # no structuredContent
    return b


def test_output_schema_is_not_judged_before_the_version_that_defines_it() -> None:
    # 2025-03-26 defines no outputSchema: a tool carrying one binds nothing.
    old = _output_schema_session("2025-03-26")
    assert [v.rule for v in lint_records(old.records) if v.rule == "tools.output-schema"] == []
    new = _output_schema_session("2025-06-18")
    assert [v.rule for v in lint_records(new.records) if v.rule == "tools.output-schema"] == [
        "tools.output-schema"
    ]


# -- batches ---------------------------------------------------------------------------------
def test_the_meta_of_a_batch_member_is_seen() -> None:
    b = RecordBuilder(modern=True)
    b.request("server/discover", id=0)
    b.result(0, {"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}}})
    member = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": modern_meta()}}
    b.raw(json.dumps([member]))
    b.result(1, {"tools": [], "ttlMs": 0, "cacheScope": "public"})
    assert [v for v in lint_records(b.records) if v.rule == "meta.malformed-accepted"] == []


# -- cascades --------------------------------------------------------------------------------
def test_a_post_without_the_session_id_is_no_new_conversation() -> None:
    w = Wire(modern=False)
    w.initialize(session="S1")
    w.post("tools/list", id=1, result={"tools": []}, drop=("mcp-session-id",))
    w.post("tools/list", id=2, result={"tools": []})
    assert [v.rule for v in lint_records(w.records)] == ["http.session-missing"]


def test_an_id_reused_in_flight_with_both_requests_answered() -> None:
    b = RecordBuilder()
    initialize(b)
    b.request("tools/call", {"name": "a"}, id=1)
    b.request("tools/call", {"name": "b"}, id=1)
    b.result(1, {"content": []})
    b.result(1, {"content": []})
    assert [v.rule for v in lint_records(b.records)] == ["id.reused"]


# -- resources -------------------------------------------------------------------------------
def test_an_empty_read_of_a_uri_the_server_later_calls_not_found() -> None:
    b = RecordBuilder()
    initialize(b)
    b.request("resources/read", {"uri": "file:///gone"}, id=1)
    empty = b.result(1, {"contents": []})
    b.request("resources/read", {"uri": "file:///gone"}, id=2)
    error = b.error(2, -32602, "Resource not found")
    found = [v for v in lint_records(b.records) if v.rule == "resources.empty-not-found"]
    assert len(found) == 1 and found[0].msgs[0] == error.seq and found[0].msgs[-1] == empty.seq
    # a not-found for another URI is no evidence about this one
    b2 = RecordBuilder()
    initialize(b2)
    b2.request("resources/read", {"uri": "file:///empty-but-real"}, id=1)
    b2.result(1, {"contents": []})
    b2.request("resources/read", {"uri": "file:///gone"}, id=2)
    b2.error(2, -32602, "Resource not found")
    assert [v for v in lint_records(b2.records) if v.rule == "resources.empty-not-found"] == []


# -- http.session-terminated -----------------------------------------------------------------
def test_a_request_with_a_terminated_session_must_get_404() -> None:
    w = Wire(modern=False)
    w.initialize(session="S1")
    w.get(method="DELETE", status=200, headers=[("mcp-session-id", "S1")])
    late = w.post("tools/list", id=1, result={"tools": []})  # answered 200: wrong
    (v,) = [v for v in lint_records(w.records) if v.rule == "http.session-terminated"]
    assert v.msgs[-1] == late["resp"] and "404" in v.message
    # answered 404 as it must be: nothing to say, and the 404 itself ends a session
    w = Wire(modern=False)
    w.initialize(session="S1")
    w.get(method="DELETE", status=200, headers=[("mcp-session-id", "S1")])
    w.post("tools/list", id=1, status=404, resp_headers=[])
    w.post("tools/list", id=2, status=404, resp_headers=[])
    assert [v for v in lint_records(w.records) if v.rule == "http.session-terminated"] == []


# -- SSE priming events ----------------------------------------------------------------------
def test_an_sse_priming_event_is_no_message() -> None:
    w = Wire()
    discovered = {"supportedVersions": [MODERN], "capabilities": {"tools": {}}, **CACHE}
    w.post("server/discover", id=1, result=discovered)
    x = _exchange(w, "tools/list", None, 2)
    w.b.raw("", "s2c", x)  # an SSE event whose data is empty
    w.b.result(2, {"tools": [], **CACHE}, ch=x)
    w.b.http(x, "end", reason="complete")
    assert lint_records(w.records) == []
    flows = analyze(w.records).flows or []
    assert [(f.method, f.status) for f in flows] == [
        ("server/discover", "complete"),
        ("tools/list", "complete"),
    ]
