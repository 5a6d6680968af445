"""Streamable HTTP rules, from built ``http`` and ``msg`` records (no sockets, no proxy)."""

from __future__ import annotations

import base64
from typing import Any

from mcpeek.inspector.records import AnyRecord
from mcpeek.inspector.testing.records import RecordBuilder
from mcpeek.rules.engine import Reported
from mcpeek.rules.families.http import decode_header, header_mismatch, needs_encoding
from mcpeek.rules.testing import lint_records

PREFIXES = ("http.", "tools.", "cache.", "resources.")
CRASHED = tuple(f"rule {p}" for p in PREFIXES)
MODERN = "2026-07-28"
LEGACY = "2025-11-25"
ACCEPT = ("accept", "application/json, text/event-stream")
JSON_CT = ("content-type", "application/json")
SSE_CT = ("content-type", "text/event-stream")
NO_BUFFER = ("x-accel-buffering", "no")
CACHE = {"ttlMs": 1000, "cacheScope": "public"}
SQL_TOOL = {
    "name": "execute_sql",
    "inputSchema": {
        "type": "object",
        "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "shard": {"type": "integer", "x-mcp-header": "Shard"},
            "query": {"type": "string"},
        },
        "required": ["region", "query"],
    },
}


def family(records: list[AnyRecord]) -> list[Reported]:
    return [
        v
        for v in lint_records(records)
        if v.rule.startswith(PREFIXES)
        or (v.rule == "inspector.rule-crashed" and v.message.startswith(CRASHED))
    ]


def found(records: list[AnyRecord], rule: str) -> list[Reported]:
    return [v for v in family(records) if v.rule == rule]


def shown(violations: list[Reported]) -> str:
    return "\n".join(f"{v.rule} {v.msgs}: {v.message}" for v in violations)


def b64(value: str) -> str:
    return "=?base64?" + base64.b64encode(value.encode()).decode() + "?="


class Wire:
    """Exchanges as a proxy would record them: request headers, body, response, stream, end."""

    def __init__(self, *, modern: bool = True) -> None:
        self.b = RecordBuilder("http", modern=modern)
        self.modern = modern
        self.n = 0
        self.session: str | None = None  # legacy: sent on every request once minted
        self.version: str | None = MODERN if modern else None  # MCP-Protocol-Version

    @property
    def records(self) -> list[AnyRecord]:
        return self.b.records

    def headers_for(self, method: str, params: dict[str, Any] | None) -> list[tuple[str, str]]:
        headers = [ACCEPT, JSON_CT]
        if self.version is not None:
            headers.append(("mcp-protocol-version", self.version))
        if self.session is not None:
            headers.append(("mcp-session-id", self.session))
        if self.modern and not method.startswith("notifications/"):
            headers.append(("mcp-method", method))
            member = {"resources/read": "uri"}.get(method, "name")
            value = (params or {}).get(member)
            if method in ("tools/call", "prompts/get", "resources/read") and isinstance(value, str):
                headers.append(("mcp-name", b64(value) if needs_encoding(value) else value))
        return headers

    def post(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        id: Any = None,
        notify: bool = False,
        headers: list[tuple[str, str]] | None = None,
        add: tuple[tuple[str, str], ...] = (),
        drop: tuple[str, ...] = (),
        status: int = 200,
        resp_headers: list[tuple[str, str]] | None = None,
        result: dict[str, Any] | None = None,
        error: tuple[int, str] | None = None,
        stream: tuple[dict[str, Any], ...] = (),
        body: str | None = None,
        meta: dict[str, Any] | None = None,
        end: bool = True,
    ) -> dict[str, int]:
        """One POST exchange; returns the seqs of its records."""
        self.n += 1
        x = f"x{self.n}"
        b = self.b
        sent = headers if headers is not None else self.headers_for(method, params)
        sent = [h for h in sent if h[0] not in drop] + list(add)
        seqs = {"req": b.http(x, "request", method="POST", path="/mcp", headers=sent).seq}
        if notify:
            seqs["msg"] = b.notify(method, params, dir="c2s", ch=x).seq
        else:
            seqs["msg"] = b.request(method, params, id=id, ch=x, meta=meta).seq
        if resp_headers is None:
            resp_headers = [SSE_CT, NO_BUFFER] if stream else [JSON_CT]
            if notify:
                resp_headers = []
        response = b.http(x, "response", status=status, headers=resp_headers, body=body)
        seqs["resp"] = response.seq
        for message in stream:
            seqs.setdefault("stream", b.send(message, "s2c", x).seq)
        if not notify:
            msg_id = id if id is not None else b._next_id
            if error is not None:
                seqs["answer"] = b.error(msg_id, error[0], error[1], ch=x).seq
            elif result is not None:
                info = {"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}}
                body_ = {"_meta": info, **result}
                if not self.modern:
                    body_.pop("_meta")
                seqs["answer"] = b.result(msg_id, body_, ch=x).seq
        if end:
            seqs["end"] = b.http(x, "end", reason="complete").seq
        return seqs

    def get(
        self,
        *,
        method: str = "GET",
        status: int = 405,
        headers: list[tuple[str, str]] | None = None,
    ) -> dict[str, int]:
        self.n += 1
        x = f"x{self.n}"
        sent = headers if headers is not None else [("accept", "text/event-stream")]
        seqs = {"req": self.b.http(x, "request", method=method, path="/mcp", headers=sent).seq}
        seqs["resp"] = self.b.http(x, "response", status=status, headers=[]).seq
        seqs["end"] = self.b.http(x, "end", reason="complete").seq
        return seqs

    def initialize(self, session: str | None = "S1", version: str = LEGACY) -> dict[str, int]:
        params = {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "c", "version": "1"},
        }
        resp = [JSON_CT] + ([("mcp-session-id", session)] if session else [])
        seqs = self.post(
            "initialize",
            params,
            id=0,
            resp_headers=resp,
            result={
                "protocolVersion": version,
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "s", "version": "1"},
            },
        )
        self.session = session
        self.version = version
        self.post("notifications/initialized", notify=True, status=202)
        return seqs


def modern_conversation() -> Wire:
    w = Wire()
    w.post(
        "server/discover",
        id=1,
        result={"supportedVersions": [MODERN], "capabilities": {"tools": {}}, **CACHE},
    )
    w.post("tools/list", id=2, result={"tools": [SQL_TOOL], **CACHE})
    w.post(
        "tools/call",
        {"name": "execute_sql", "arguments": {"region": "us-west1", "shard": 42, "query": "q"}},
        id=3,
        add=(("mcp-param-region", "us-west1"), ("mcp-param-shard", "42")),
        meta={"progressToken": "p1"},
        stream=(
            {
                "jsonrpc": "2.0",
                "method": "notifications/progress",
                "params": {"progressToken": "p1", "progress": 1},
            },
        ),
        result={"content": []},
    )
    return w


# -- conformant traffic ----------------------------------------------------------------------------


def test_conformant_modern_http_is_clean() -> None:
    w = modern_conversation()
    w.post(
        "tools/call",
        {"name": "execute_sql", "arguments": {"region": "Hello, 世界", "query": "q"}},
        id=4,
        add=(("mcp-param-region", b64("Hello, 世界")),),
        result={"content": []},
    )
    w.post(
        "resources/read",
        {"uri": "file:///données.txt"},
        id=5,
        result={"contents": [{"uri": "file:///données.txt", "text": "x"}], **CACHE},
    )
    w.post("tools/list", id=6, error=(-32601, "nope"), status=404)
    w.post(
        "ping",
        id=7,
        drop=("mcp-protocol-version",),
        add=(("mcp-protocol-version", "2099-01-01"),),
        meta={"io.modelcontextprotocol/protocolVersion": "2099-01-01"},
        status=400,
        error=(-32022, "unsupported"),
    )
    w.get(status=405)  # a legacy client's GET: info only
    violations = [v for v in family(w.records) if v.rule != "http.get-stream"]
    assert violations == [], shown(violations)


def test_conformant_legacy_http_session_is_clean() -> None:
    w = Wire(modern=False)
    w.initialize()
    w.post("tools/list", id=1, result={"tools": [SQL_TOOL]})
    w.post(
        "tools/call",
        {"name": "execute_sql", "arguments": {"region": "eu", "query": "q"}},
        id=2,
        resp_headers=[SSE_CT],  # no X-Accel-Buffering: modern SHOULD only
        stream=({"jsonrpc": "2.0", "id": 77, "method": "sampling/createMessage", "params": {}},),
        result={"content": []},
    )
    w.get(status=200, headers=[("accept", "text/event-stream"), ("mcp-session-id", "S1")])
    w.get(method="DELETE", status=200, headers=[("mcp-session-id", "S1")])
    assert family(w.records) == [], shown(family(w.records))


# -- http.accept -----------------------------------------------------------------------------------


def test_accept_must_list_both_types() -> None:
    w = Wire()
    seqs = w.post("tools/list", id=1, add=(), drop=("accept",), result={"tools": [], **CACHE})
    w.post("ping", id=2, add=(("accept", "application/json"),), drop=("accept",), result={})
    w.post(
        "ping",
        id=3,
        add=(("accept", "Application/JSON; q=1"), ("accept", "text/event-stream;q=0.5")),
        drop=("accept",),
        result={},
    )
    first, second = found(w.records, "http.accept")
    assert first.msgs == [seqs["req"], seqs["msg"]]
    assert "POST carrying tools/list (id 1) has no Accept header" in first.message
    assert 'has Accept "application/json"; it must list both' in second.message


# -- http.protocol-version-header ------------------------------------------------------------------


def test_protocol_version_header_modern() -> None:
    w = Wire()
    missing = w.post("tools/list", id=1, drop=("mcp-protocol-version",), result={"tools": []})
    w.post(
        "ping",
        id=2,
        drop=("mcp-protocol-version",),
        add=(("mcp-protocol-version", "2025-11-25"),),
        result={},
    )
    w.post(
        "notifications/cancelled",
        {"requestId": 1},
        notify=True,
        status=202,
        drop=("mcp-protocol-version",),
    )
    first, second = found(w.records, "http.protocol-version-header")
    assert first.msgs == [missing["req"], missing["msg"]]
    assert "POST carrying tools/list (id 1) has no MCP-Protocol-Version header" in first.message
    assert 'header "2025-11-25" differs from the body\'s' in second.message


def test_protocol_version_header_legacy() -> None:
    w = Wire(modern=False)
    w.initialize()
    seqs = w.post("tools/list", id=1, drop=("mcp-protocol-version",), result={"tools": []})
    (v,) = found(w.records, "http.protocol-version-header")
    assert v.msgs == [seqs["req"], seqs["msg"]]
    assert "after initialize negotiated 2025-11-25" in v.message
    old = Wire(modern=False)
    old.initialize(version="2025-03-26")  # no header in that version
    old.post("tools/list", id=1, drop=("mcp-protocol-version",), result={"tools": []})
    assert found(old.records, "http.protocol-version-header") == []


# -- http.method-header / http.name-header ---------------------------------------------------------


def test_method_header() -> None:
    w = Wire()
    seqs = w.post("tools/list", id=1, drop=("mcp-method",), result={"tools": []})
    w.post("ping", id=2, drop=("mcp-method",), add=(("mcp-method", "Ping"),), result={})
    first, second = found(w.records, "http.method-header")
    assert first.msgs == [seqs["req"], seqs["msg"]]
    assert "has no Mcp-Method header" in first.message
    assert 'Mcp-Method header "Ping" differs from the body\'s method "ping"' in second.message
    legacy = Wire(modern=False)
    legacy.initialize()
    legacy.post("tools/list", id=1, result={"tools": []})  # no Mcp-Method before 2026-07-28
    assert found(legacy.records, "http.method-header") == []


def test_name_header() -> None:
    w = Wire()
    w.post("tools/list", id=1, result={"tools": [SQL_TOOL], **CACHE})
    seqs = w.post(
        "prompts/get", {"name": "greet"}, id=2, drop=("mcp-name",), result={"messages": []}
    )
    w.post(
        "tools/call",
        {"name": "a"},
        id=3,
        drop=("mcp-name",),
        add=(("mcp-name", "b"),),
        result={"content": []},
    )
    w.post(
        "tools/call",
        {"name": "é"},
        id=4,
        drop=("mcp-name",),
        add=(("mcp-name", "é"),),
        result={"content": []},
    )
    w.post(
        "tools/call",
        {"name": "a"},
        id=5,
        drop=("mcp-name",),
        add=(("mcp-name", "=?base64?!!?="),),
        result={"content": []},
    )
    w.post(
        "tools/call",
        {"name": "a"},
        id=6,
        drop=("mcp-name",),
        add=(("mcp-name", b64("a")),),
        result={"content": []},
    )
    missing, other, raw, broken = found(w.records, "http.name-header")
    assert missing.msgs == [seqs["req"], seqs["msg"]]
    assert (
        "POST carrying prompts/get (id 2) has no Mcp-Name header (params.name)" in missing.message
    )
    assert 'is "b", the body has "a"' in other.message
    assert 'carries "é" unencoded' in raw.message
    assert "is not valid Base64" in broken.message


# -- http.param-header -----------------------------------------------------------------------------


def test_param_header() -> None:
    w = Wire()
    w.post("tools/list", id=1, result={"tools": [SQL_TOOL], **CACHE})
    args = {"region": "us-west1", "shard": 7, "query": "q"}
    seqs = w.post(
        "tools/call",
        {"name": "execute_sql", "arguments": args},
        id=2,
        add=(("mcp-param-shard", "7"),),
        result={"content": []},
    )
    w.post(
        "tools/call",
        {"name": "execute_sql", "arguments": {"region": "eu", "query": "q"}},
        id=3,
        add=(("mcp-param-region", "us"), ("mcp-param-shard", "1")),
        result={"content": []},
    )
    missing, wrong = found(w.records, "http.param-header")
    assert missing.msgs == [seqs["req"], seqs["msg"]]
    assert 'Mcp-Param-Region is missing (arguments.region is "us-west1")' in missing.message
    assert 'Mcp-Param-Region is "us", the body has "eu"' in wrong.message
    assert "Mcp-Param-Shard is sent but arguments.shard is absent or null" in wrong.message


def test_param_header_near_misses() -> None:
    w = Wire()
    w.post("tools/list", id=1, result={"tools": [SQL_TOOL], **CACHE})
    w.post(
        "tools/call",
        {"name": "execute_sql", "arguments": {"region": " padded ", "shard": 42.0, "query": "q"}},
        id=2,
        add=(
            ("mcp-param-region", b64(" padded ")),
            ("mcp-param-shard", "42.0"),
            ("mcp-param-x", "1"),
        ),
        result={"content": []},
    )
    w.post(
        "tools/call",
        {"name": "execute_sql", "arguments": {"region": None, "query": "q"}},
        id=3,
        result={"content": []},
    )
    w.post("tools/call", {"name": "unlisted", "arguments": {}}, id=4, result={"content": []})
    assert found(w.records, "http.param-header") == []


# -- http.notification-status ----------------------------------------------------------------------


def test_notification_status() -> None:
    w = Wire(modern=False)
    w.initialize()
    ok = w.post("notifications/roots/list_changed", notify=True, status=202)
    bad = w.post("notifications/roots/list_changed", notify=True, status=200)
    body = w.post("notifications/roots/list_changed", notify=True, status=202, body="ok")
    w.post("notifications/roots/list_changed", notify=True, status=400)
    first, second = found(w.records, "http.notification-status")
    assert first.msgs == [bad["msg"], bad["resp"]]
    assert "answered 200; it MUST be 202 Accepted" in first.message
    assert second.msgs == [body["msg"], body["resp"]]
    assert "answered 202 with a body" in second.message
    assert ok["resp"] not in [s for v in (first, second) for s in v.msgs]


# -- http.content-type -----------------------------------------------------------------------------


def test_content_type() -> None:
    w = Wire()
    seqs = w.post(
        "tools/list", id=1, resp_headers=[("content-type", "text/html")], result={"tools": []}
    )
    w.post("ping", id=2, resp_headers=[], result={})
    w.post(
        "ping", id=3, resp_headers=[("content-type", "Application/JSON; charset=utf-8")], result={}
    )
    w.post("ping", id=4, status=401, resp_headers=[("content-type", "text/plain")], body="no")
    first, second = found(w.records, "http.content-type")
    assert first.msgs == [seqs["req"], seqs["msg"], seqs["resp"]]
    assert 'tools/list (id 1) answered 200 with Content-Type "text/html"' in first.message
    assert "ping (id 2) answered 200 with no Content-Type" in second.message


# -- http.error-status -----------------------------------------------------------------------------


def test_error_status() -> None:
    w = modern_conversation()  # the server has proved modern (resultType)
    mismatch = w.post("tools/list", id=4, drop=("mcp-method",), error=(-32020, "header"))
    unknown = w.post("foo/bar", id=5, error=(-32601, "no such method"))
    w.post("ping", id=6, error=(-32602, "bad"))  # -32602 for another reason: any status
    b = w.b
    x = "x99"
    b.http(x, "request", method="POST", path="/mcp", headers=[ACCEPT, JSON_CT])
    b.send({"jsonrpc": "2.0", "id": 7, "method": "tools/list"}, "c2s", x)  # no _meta
    b.http(x, "response", status=200, headers=[JSON_CT])
    b.send(
        {"jsonrpc": "2.0", "id": 7, "error": {"code": -32602, "message": "missing _meta"}},
        "s2c",
        x,
    )
    b.http(x, "end", reason="complete")
    first, second, third = found(w.records, "http.error-status")
    assert first.msgs == [mismatch["msg"], mismatch["answer"], mismatch["resp"]]
    assert "error -32020 in reply to tools/list (id 4) sent with HTTP 200; it MUST be 400" in (
        first.message
    )
    assert second.msgs == [unknown["msg"], unknown["answer"], unknown["resp"]]
    assert "it MUST be 404" in second.message
    assert "-32602 for a request missing required _meta" in third.message


def test_error_status_waits_for_a_modern_server() -> None:
    # A dual-era client's probe rejected by a legacy server looks the same: no finding.
    probe = Wire()
    probe.post("server/discover", id=1, error=(-32601, "Method not found"))
    probe.modern = False
    probe.version = None
    probe.initialize(session=None)
    assert found(probe.records, "http.error-status") == []
    # A modern server proves itself later: the finding comes then.
    w = Wire()
    early = w.post("foo/bar", id=1, error=(-32601, "nope"))
    w.post("tools/list", id=2, result={"tools": [], **CACHE})
    (v,) = found(w.records, "http.error-status")
    assert v.msgs == [early["msg"], early["answer"], early["resp"]]


# -- http.sse-request ------------------------------------------------------------------------------


def test_sse_request() -> None:
    w = Wire()
    sampling = {"jsonrpc": "2.0", "id": 50, "method": "sampling/createMessage", "params": {}}
    seqs = w.post("tools/call", {"name": "t"}, id=1, stream=(sampling,), result={"content": []})
    (v,) = found(w.records, "http.sse-request")
    assert v.msgs == [seqs["req"], seqs["stream"]]
    assert "sampling/createMessage (id 50) on the SSE stream of exchange x1" in v.message


# -- http.session-id -------------------------------------------------------------------------------


def test_session_id_in_the_modern_era() -> None:
    w = Wire()
    seqs = w.post(
        "tools/list",
        id=1,
        resp_headers=[JSON_CT, ("mcp-session-id", "abc")],
        result={"tools": [], **CACHE},
    )
    w.post("ping", id=2, resp_headers=[JSON_CT, ("mcp-session-id", "abc")], result={})
    w.post("ping", id=3, add=(("mcp-session-id", "old"),), result={})  # ignored: fine
    (v,) = found(w.records, "http.session-id")
    assert v.msgs == [seqs["msg"], seqs["resp"]]
    assert v.severity == "warning"
    assert 'set Mcp-Session-Id "abc" on the response to tools/list (id 1)' in v.message


# -- http.get-stream -------------------------------------------------------------------------------


def test_get_stream_in_the_modern_era() -> None:
    w = modern_conversation()
    bad = w.get(status=200)
    w.get(status=200)  # the same again: reported once
    good = w.get(method="DELETE", status=405)
    first, second = found(w.records, "http.get-stream")
    assert first.severity == "info"
    assert first.msgs == [bad["req"], bad["resp"]]
    assert (
        "GET /mcp (a legacy client's standalone stream) answered 200; a modern server SHOULD"
        in (first.message)
    )
    assert second.msgs == [good["req"], good["resp"]]
    assert "answered 405, as a modern server should" in second.message


def test_an_answer_mcpeek_gave_itself_judges_no_server() -> None:
    # A GET refused by mcpeek's own guard (403): the server never saw it, so no
    # "a modern server SHOULD answer 405" about it.
    w = modern_conversation()
    w.n += 1
    x = f"x{w.n}"
    w.b.http(x, "request", method="GET", path="/mcp", headers=[("accept", "text/event-stream")])
    w.b.http(x, "response", status=403, headers=[], by_proxy=True)
    w.b.http(x, "end", reason="refused")
    assert found(w.records, "http.get-stream") == []
    w.get(status=403)  # the same answer from the server itself is judged
    assert len(found(w.records, "http.get-stream")) == 1


# -- http.session-missing --------------------------------------------------------------------------


def test_session_missing_after_initialize() -> None:
    w = Wire(modern=False)
    init = w.initialize()
    w.session = None  # the client forgets it
    seqs = w.post("tools/list", id=1, result={"tools": []})
    get = w.get(status=400, headers=[("accept", "text/event-stream")])
    first, second = found(w.records, "http.session-missing")
    assert first.msgs == [init["answer"], seqs["req"], seqs["msg"]]
    assert 'has no Mcp-Session-Id header although initialize returned session "S1"' in first.message
    assert second.msgs == [init["answer"], get["req"]]


def test_session_missing_near_misses() -> None:
    stateless = Wire(modern=False)
    stateless.initialize(session=None)
    stateless.post("tools/list", id=1, result={"tools": []})
    assert found(stateless.records, "http.session-missing") == []
    ended = Wire(modern=False)
    ended.initialize()
    ended.post("tools/list", id=1, status=404, resp_headers=[], error=(-32001, "session expired"))
    ended.session = None
    ended.initialize(session="S2")  # a new session, started without a session id
    assert found(ended.records, "http.session-missing") == []


# -- http.sse-buffering ----------------------------------------------------------------------------


def test_sse_buffering_reported_once() -> None:
    w = Wire()
    note = {
        "jsonrpc": "2.0",
        "method": "notifications/message",
        "params": {"level": "info", "data": 1},
    }
    seqs = w.post(
        "tools/call",
        {"name": "t"},
        id=1,
        resp_headers=[SSE_CT],
        stream=(note,),
        result={"content": []},
    )
    w.post(
        "tools/call",
        {"name": "t"},
        id=2,
        resp_headers=[SSE_CT],
        stream=(note,),
        result={"content": []},
    )
    (v,) = found(w.records, "http.sse-buffering")
    assert v.msgs == [seqs["msg"], seqs["resp"]]
    assert "has no X-Accel-Buffering header; servers SHOULD send X-Accel-Buffering: no" in v.message


# -- helpers ---------------------------------------------------------------------------------------


def test_header_value_encoding() -> None:
    assert decode_header(b64("Hello, 世界")) == ("Hello, 世界", True)
    assert decode_header("plain") == ("plain", False)
    assert decode_header("=?base64?%%?=") == (None, True)
    assert needs_encoding("=?base64?literal?=")
    assert needs_encoding(" padded ") and needs_encoding("line1\nline2")
    assert not needs_encoding("us-west1")
    assert header_mismatch(b64("=?base64?literal?="), "=?base64?literal?=") is None
    assert header_mismatch("=?base64?literal?=", "=?base64?literal?=") is not None
    assert header_mismatch("42.0", "42", number=42.0) is None


def test_notification_answered_202_with_messages_on_its_stream() -> None:
    """A regression: the server's messages on an exchange must still be counted."""
    from mcpeek.inspector.testing.records import RecordBuilder
    from mcpeek.rules.testing import fired

    b = RecordBuilder("http", modern=True)
    b.http(
        "x1",
        "request",
        method="POST",
        path="/mcp",
        headers=[
            ("accept", "application/json, text/event-stream"),
            ("content-type", "application/json"),
        ],
    )
    note = b.notify("notifications/cancelled", {"requestId": 1}, dir="c2s", ch="x1")
    b.http("x1", "response", status=202, headers=[("content-type", "text/event-stream")])
    b.notify("notifications/message", {"level": "info", "data": "x"}, ch="x1")
    b.http("x1", "end", reason="complete")
    found = fired(b.records, "http.notification-status")
    assert len(found) == 1 and note.seq in found[0].msgs
