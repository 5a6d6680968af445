"""Versions, lifecycle, capabilities and deprecated features together (conformant traffic), the
legacy handshake rules (lifecycle.*), and the helpers the version, capability and deprecated
tests share."""

from __future__ import annotations

from typing import Any

from mcpeek.inspector.records import AnyRecord
from mcpeek.inspector.testing.records import RecordBuilder
from mcpeek.rules.engine import Reported
from mcpeek.rules.testing import fired, lint_records

FAMILY = (
    "version.",
    "lifecycle.",
    "capability.",
    "deprecated.",
)
LEGACY = "2025-11-25"
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
SERVER_INFO = {"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}}


def family(records: list[AnyRecord]) -> list[Reported]:
    return [v for v in lint_records(records) if v.rule.startswith(FAMILY)]


def handshake(
    b: RecordBuilder,
    *,
    client_caps: dict[str, Any] | None = None,
    server_caps: dict[str, Any] | None = None,
    asked: str = LEGACY,
    answered: str = LEGACY,
    initialized: bool = True,
    id: Any = 0,
) -> None:
    b.request(
        "initialize",
        {
            "protocolVersion": asked,
            "capabilities": client_caps if client_caps is not None else {},
            "clientInfo": {"name": "c", "version": "1"},
        },
        id=id,
    )
    b.result(
        id,
        {
            "protocolVersion": answered,
            "capabilities": server_caps if server_caps is not None else {"tools": {}},
            "serverInfo": {"name": "s", "version": "1"},
        },
    )
    if initialized:
        b.notify("notifications/initialized", dir="c2s")


def modern_discover(b: RecordBuilder, caps: dict[str, Any] | None = None, id: Any = 1) -> None:
    b.request("server/discover", id=id)
    b.result(
        id,
        {
            "supportedVersions": ["2026-07-28"],
            "capabilities": caps if caps is not None else {"tools": {}},
            "_meta": SERVER_INFO,
            "ttlMs": 0,
            "cacheScope": "public",
        },
    )


# -- conformant conversations ------------------------------------------------------------


def test_conformant_legacy_conversation_is_clean() -> None:
    b = RecordBuilder()
    b.request("ping", id="p0")  # ping before initialize is allowed
    b.result("p0")
    handshake(b, client_caps={"sampling": {}, "roots": {}}, server_caps={"tools": {}})
    b.request("tools/list", id=1)
    b.result(1, {"tools": []})
    b.request("tools/call", {"name": "t", "_meta": {"progressToken": 1}}, id=2)
    b.notify("notifications/progress", {"progressToken": 1, "progress": 1})
    b.request("sampling/createMessage", {"messages": [], "maxTokens": 5}, id=7, dir="s2c")
    b.result(7, {"role": "assistant", "content": {"type": "text", "text": "x"}}, dir="c2s")
    b.request("roots/list", id=8, dir="s2c")
    b.result(8, {"roots": []}, dir="c2s")
    b.result(2, {"content": []})
    assert family(b.records) == []


def test_conformant_modern_conversation_is_clean() -> None:
    b = RecordBuilder(modern=True)
    modern_discover(b, {"tools": {}, "prompts": {}})
    b.request("tools/list", id=2)
    b.result(2, {"tools": [], "_meta": SERVER_INFO})
    b.request("prompts/get", {"name": "p"}, id=3)
    b.result(3, {"messages": [], "_meta": SERVER_INFO})
    assert family(b.records) == []


def test_dual_era_probe_rejected_then_legacy_is_clean() -> None:
    b = RecordBuilder()
    b.request("server/discover", id=1, meta=MODERN_META)
    b.error(1, -32601, "Method not found")
    b.request("ping", id=2)
    b.result(2)
    handshake(b, id=3)
    b.request("tools/list", id=4)
    b.result(4, {"tools": []})
    assert family(b.records) == []


def test_dual_era_probe_timed_out_and_cancelled_then_legacy_is_clean() -> None:
    b = RecordBuilder()
    b.request("server/discover", id=1, meta=MODERN_META)
    b.notify("notifications/cancelled", {"requestId": 1, "reason": "timeout"}, dir="c2s")
    handshake(b, id=2)
    b.request("tools/list", id=3)
    b.result(3, {"tools": []})
    assert family(b.records) == []


# -- version.unsupported-error-shape -------------------------------------------------------


# -- version.discover-missing -------------------------------------------------------------


# -- version.removed-method -----------------------------------------------------------------


# -- lifecycle.not-initialized-first ------------------------------------------------------


def test_tools_list_before_initialize() -> None:
    b = RecordBuilder()
    first = b.request("tools/list", id=1)
    b.result(1, {"tools": []})
    b.request("tools/list", id=2)  # reported once
    handshake(b, id=3)
    (v,) = fired(b.records, "lifecycle.not-initialized-first")
    assert v.msgs == [first.seq]
    assert "tools/list before any initialize" in v.message


def test_initialized_notification_before_initialize() -> None:
    b = RecordBuilder()
    b.request("ping", id=1)  # makes the conversation legacy (a notification alone does not)
    b.result(1)
    note = b.notify("notifications/initialized", dir="c2s")
    (v,) = fired(b.records, "lifecycle.not-initialized-first")
    assert v.msgs == [note.seq]


def test_ping_then_initialize_is_fine() -> None:
    b = RecordBuilder()
    b.request("ping", id=1)
    b.result(1)
    handshake(b, id=2)
    assert fired(b.records, "lifecycle.not-initialized-first") == []


# -- lifecycle.early-request ----------------------------------------------------------------


def test_client_request_before_the_initialize_response() -> None:
    b = RecordBuilder()
    init = b.request("initialize", {"protocolVersion": LEGACY, "capabilities": {}}, id=0)
    early = b.request("tools/list", id=1)
    b.request("ping", id=2)  # allowed
    b.result(0, {"protocolVersion": LEGACY, "capabilities": {"tools": {}}})
    (v,) = fired(b.records, "lifecycle.early-request")
    assert v.severity == "warning"
    assert v.msgs == [init.seq, early.seq]


def test_server_request_before_initialized() -> None:
    b = RecordBuilder()
    handshake(b, client_caps={"roots": {}}, initialized=False)
    b.request("ping", id="p", dir="s2c")  # allowed
    b.result("p", dir="c2s")
    early = b.request("roots/list", id="r", dir="s2c")
    b.result("r", {"roots": []}, dir="c2s")
    b.notify("notifications/initialized", dir="c2s")
    b.request("roots/list", id="r2", dir="s2c")  # after initialized: fine
    (v,) = fired(b.records, "lifecycle.early-request")
    assert v.msgs == [1, early.seq]
    assert "roots/list" in v.message


def test_requests_after_the_handshake_are_not_early() -> None:
    b = RecordBuilder()
    handshake(b, client_caps={"roots": {}})
    b.request("tools/list", id=1)
    b.request("roots/list", id="r", dir="s2c")
    assert fired(b.records, "lifecycle.early-request") == []


# -- lifecycle.initialized-missing ------------------------------------------------------------


def test_request_without_initialized() -> None:
    b = RecordBuilder()
    handshake(b, initialized=False)
    b.request("ping", id=1)  # not counted
    bad = b.request("tools/list", id=2)
    b.request("tools/list", id=3)  # reported once
    (v,) = fired(b.records, "lifecycle.initialized-missing")
    assert v.msgs == [bad.seq]
    assert "notifications/initialized" in v.message


def test_initialized_sent_then_requests() -> None:
    b = RecordBuilder()
    handshake(b)
    b.request("tools/list", id=2)
    assert fired(b.records, "lifecycle.initialized-missing") == []


def test_http_initialized_crossing_a_request_is_fine_but_late_is_not() -> None:
    def capture(delay: float) -> tuple[list[AnyRecord], int]:
        b = RecordBuilder("http")
        session = [("Mcp-Session-Id", "s1")]
        b.http("x1", "request", method="POST", path="/mcp")
        b.request("initialize", {"protocolVersion": LEGACY, "capabilities": {}}, id=0, ch="x1")
        b.http("x1", "response", status=200, headers=session)
        b.result(0, {"protocolVersion": LEGACY, "capabilities": {"tools": {}}}, ch="x1")
        b.http("x1", "end")
        b.http("x2", "request", method="POST", path="/mcp", headers=session)
        req = b.request("tools/list", id=1, ch="x2")
        b.http("x2", "response", status=200, headers=session)
        b.wait(delay)
        b.http("x3", "request", method="POST", path="/mcp", headers=session)
        b.notify("notifications/initialized", dir="c2s", ch="x3")
        b.http("x3", "response", status=202, headers=session)
        return b.records, req.seq

    crossed, _ = capture(0.01)
    assert fired(crossed, "lifecycle.initialized-missing") == []
    late, seq = capture(5.0)
    (v,) = fired(late, "lifecycle.initialized-missing")
    assert v.msgs[-1] == seq


# -- lifecycle.version-mismatch -------------------------------------------------------------


def test_server_answers_a_version_it_did_not_list() -> None:
    b = RecordBuilder()
    b.request("initialize", {"protocolVersion": "1.0.0", "capabilities": {}}, id=1)
    listed = b.error(
        1,
        -32602,
        "Unsupported protocol version",
        data={"supported": ["2025-06-18", "2025-11-25"], "requested": "1.0.0"},
    )
    b.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}}, id=2)
    bad = b.result(2, {"protocolVersion": "2025-03-26", "capabilities": {}})
    (v,) = fired(b.records, "lifecycle.version-mismatch")
    assert v.msgs == [listed.seq, bad.seq]
    assert "2025-03-26" in v.message


def test_server_downgrades_a_version_it_listed() -> None:
    b = RecordBuilder()
    b.request("initialize", {"protocolVersion": "1.0.0", "capabilities": {}}, id=1)
    b.error(1, -32602, "Unsupported", data={"supported": ["2025-06-18", "2025-11-25"]})
    b.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}}, id=2)
    bad = b.result(2, {"protocolVersion": "2025-06-18", "capabilities": {}})
    (v,) = fired(b.records, "lifecycle.version-mismatch")
    assert v.msgs[-1] == bad.seq and "MUST answer the same version" in v.message


def test_server_answering_another_version_is_negotiation() -> None:
    b = RecordBuilder()
    handshake(b, asked="2025-11-25", answered="2025-06-18")
    b.request("tools/list", id=1)
    assert fired(b.records, "lifecycle.version-mismatch") == []


def test_http_client_keeps_going_with_another_version() -> None:
    b = RecordBuilder("http")
    session = [("Mcp-Session-Id", "s1")]
    b.http("x1", "request", method="POST", path="/mcp")
    b.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}}, id=0, ch="x1")
    b.http("x1", "response", status=200, headers=session)
    b.result(0, {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}}}, ch="x1")
    b.http("x1", "end")
    for n, version in enumerate(("2025-06-18", "2025-11-25", "2025-03-26"), start=2):
        x = f"x{n}"
        b.http(x, "request", method="POST", headers=[*session, ("MCP-Protocol-Version", version)])
        b.request("tools/list", id=n, ch=x)
        b.http(x, "response", status=200, headers=session)
        b.result(n, {"tools": []}, ch=x)
        b.http(x, "end")
    (v,) = fired(b.records, "lifecycle.version-mismatch")
    assert "2025-03-26" in v.message
    tools_list = [r for r in b.records if getattr(r, "raw", None) and '"id":4,"method"' in r.raw]
    assert v.msgs == [tools_list[0].seq]


# -- capability.not-declared -----------------------------------------------------------------


# -- deprecated.feature ------------------------------------------------------------------------
