"""Real-world traffic that mcpeek judged wrong (issue #15): correlation and its rules."""

from __future__ import annotations

from mcpeek.inspector.testing.records import RecordBuilder
from mcpeek.rules.testing import lint_records
from tests.rules.test_http import JSON_CT, Wire


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
