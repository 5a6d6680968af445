"""The modern-only rules judge a server only once it has shown it is modern (issue #15).

A modern client may talk to a legacy server: a dual-era client probing with
``server/discover``, or a client pinned to 2026-07-28. The server then answers
under its own rules, and the engine holds every modern-only finding on its
messages (``mcpeek.rules.held``) until the server shows it is modern.
"""

from __future__ import annotations

from mcpeek.inspector.analysis import analyze
from mcpeek.inspector.testing.records import RecordBuilder
from mcpeek.rules.testing import lint_records
from tests.rules.test_http import JSON_CT, Wire

LEGACY_REJECTION = {"code": -32000, "message": "Bad Request: No valid session ID provided"}


def probe_rejected_by_a_legacy_server(error: dict[str, object]) -> Wire:
    """A dual-era client POSTs server/discover; the legacy server answers HTTP 400
    with a JSON-RPC error; the client falls back to initialize."""
    w = Wire(modern=True)
    w.n += 1
    b, x = w.b, f"x{w.n}"
    b.http(x, "request", method="POST", path="/mcp", headers=w.headers_for("server/discover", None))
    b.request("server/discover", None, id=1, ch=x)
    b.http(x, "response", status=400, headers=[JSON_CT])
    b.send(error, "s2c", x)
    b.http(x, "end", reason="complete")
    w.modern = b.modern = False
    w.version = None
    w.initialize()
    w.post("tools/list", id=2, result={"tools": []})
    return w


def test_the_probe_rejected_by_a_legacy_http_server() -> None:
    for error in (
        {"jsonrpc": "2.0", "id": None, "error": LEGACY_REJECTION},
        {"jsonrpc": "2.0", "error": LEGACY_REJECTION},  # no id member at all
    ):
        w = probe_rejected_by_a_legacy_server(error)
        rules = {v.rule: v for v in lint_records(w.records)}
        assert "error.legacy-range" not in rules  # the server never showed it is modern
        assert "request.unanswered" not in rules  # the exchange pairs the error
        # The request's id (1) was readable: the error owed it back.
        assert set(rules) == {"id.null"}
        assert "server/discover" in rules["id.null"].message
        flows = analyze(w.records).flows or []
        assert (flows[0].method, flows[0].status) == ("server/discover", "error")
        assert not any(f.status == "orphan" for f in flows)


def test_a_client_pinned_to_the_modern_revision_against_a_legacy_server() -> None:
    b = RecordBuilder(modern=True)
    b.request("tools/list", id=1)
    b.send({"jsonrpc": "2.0", "id": 1, "result": {"tools": []}}, "s2c")  # the legacy way
    b.request("resources/read", {"uri": "file:///a"}, id=2)
    b.send({"jsonrpc": "2.0", "id": 2, "error": {"code": -32002, "message": "nf"}}, "s2c")
    assert [v.rule for v in lint_records(b.records)] == []


def test_held_findings_are_reported_once_the_server_shows_it_is_modern() -> None:
    b = RecordBuilder(modern=True)
    b.request("tools/list", id=1)
    legacy_way = b.send({"jsonrpc": "2.0", "id": 1, "result": {"tools": []}}, "s2c")
    b.request("server/discover", id=2)
    b.result(2, {"supportedVersions": ["2026-07-28"], "capabilities": {}})
    found = {(v.rule, v.msgs[-1]) for v in lint_records(b.records)}
    assert ("cache.fields-missing", legacy_way.seq) in found
    assert ("result.result-type-missing", legacy_way.seq) in found
