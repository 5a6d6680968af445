"""Request and result ``_meta``: the per-request fields and serverInfo."""

from __future__ import annotations

from typing import Any

import pytest

from mcpeek.inspector.records import AnyRecord
from mcpeek.inspector.testing.records import RecordBuilder, modern_meta
from mcpeek.rules.engine import Reported
from mcpeek.rules.testing import lint_records
from tests.conftest import VENDORED_SPEC
from tests.rules.test_results import (
    answer,
    bare,
    discovered,
    family,
    sdk_like_conversation,
    shown,
)

PV = "io.modelcontextprotocol/protocolVersion"
CAPS = "io.modelcontextprotocol/clientCapabilities"
INFO = "io.modelcontextprotocol/clientInfo"
LEVEL = "io.modelcontextprotocol/logLevel"
EXAMPLES = VENDORED_SPEC / "2026-07-28" / "examples"


def found(records: list[AnyRecord], rule: str) -> list[Reported]:
    return [v for v in lint_records(records) if v.rule == rule]


def without(*keys: str, **extra: Any) -> dict[str, Any]:
    """A modern per-request ``_meta`` with ``keys`` left out."""
    meta = {k: v for k, v in modern_meta(**extra).items() if k not in keys}
    return meta


def send_request(b: RecordBuilder, id: Any, method: str, params: dict[str, Any]) -> int:
    """A client request exactly as given (no ``_meta`` added)."""
    b.send({"jsonrpc": "2.0", "id": id, "method": method, "params": params}, "c2s")
    return b.last.seq


def legacy() -> RecordBuilder:
    b = RecordBuilder()
    b.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}}, id=0)
    b.result(0, {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}})
    b.notify("notifications/initialized", dir="c2s")
    return b


# -- conformant traffic --------------------------------------------------------------------
def test_sdk_like_modern_conversation_is_clean() -> None:
    b = sdk_like_conversation()
    assert family(b.records) == [], shown(family(b.records))


def test_legacy_requests_need_no_meta() -> None:
    b = legacy()
    b.request("tools/list", id=1)
    b.result(1, {"tools": []})
    b.notify("notifications/message", {"level": "info", "data": "x"})
    assert family(b.records) == [], shown(family(b.records))


# -- per-request fields --------------------------------------------------------------------
@pytest.mark.parametrize(
    ("rule", "key", "severity"),
    [
        ("meta.protocol-version-missing", PV, "error"),
        ("meta.client-capabilities-missing", CAPS, "error"),
        ("meta.client-info-missing", INFO, "warning"),
    ],
)
def test_a_request_without_a_per_request_field(rule: str, key: str, severity: str) -> None:
    b = discovered()
    seq = send_request(b, 1, "tools/list", {"_meta": without(key)})
    b.error(1, -32602, "missing _meta field")
    b.request("tools/list", id=2)  # complete: near miss
    answer(b, 2, {"tools": []})
    [v] = found(b.records, rule)
    assert v.msgs == [seq]
    assert v.severity == severity
    assert f'tools/list request (id 1) has no _meta["{key}"]' in v.message


def test_a_request_without_any_meta() -> None:
    b = discovered()
    seq = send_request(b, 1, "tools/list", {})
    b.error(1, -32602, "missing _meta")
    for rule in (
        "meta.protocol-version-missing",
        "meta.client-capabilities-missing",
        "meta.client-info-missing",
    ):
        [v] = found(b.records, rule)
        assert v.msgs == [seq]
        assert "has no _meta (" in v.message


def test_a_first_discover_without_meta_is_checked_once_its_answer_shows_a_modern_server() -> None:
    b = RecordBuilder()
    seq = send_request(b, "d", "server/discover", {})
    answer(b, "d", {"supportedVersions": ["2026-07-28"], "capabilities": {}})
    [v] = found(b.records, "meta.protocol-version-missing")
    assert v.msgs == [seq]
    [w] = found(b.records, "meta.malformed-accepted")
    assert w.msgs == [seq, seq + 1]


def test_a_rejected_discover_probe_then_initialize_is_legacy() -> None:
    b = RecordBuilder()
    b.request("server/discover", id="d", meta=modern_meta())
    b.error("d", -32601, "Method not found")
    b.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}}, id=0)
    b.result(0, {"protocolVersion": "2025-11-25", "capabilities": {}})
    b.request("tools/list", id=1)
    b.result(1, {"tools": []})
    assert family(b.records) == [], shown(family(b.records))


# -- meta.server-info-missing --------------------------------------------------------------
def test_result_without_server_info() -> None:
    b = discovered()
    b.request("tools/call", {"name": "x"}, id=1)
    seq = bare(b, 1, {"resultType": "complete", "content": []})
    [v] = found(b.records, "meta.server-info-missing")
    assert v.msgs == [seq]
    assert v.severity == "warning"
    assert "tools/call (id 1)" in v.message


def test_server_info_present_and_errors_are_fine() -> None:
    b = discovered()
    b.request("tools/call", {"name": "x"}, id=1)
    answer(b, 1, {"content": []})
    b.request("tools/call", {"name": "x"}, id=2)
    b.error(2, -32602, "no")
    assert found(b.records, "meta.server-info-missing") == []


# -- meta.malformed-accepted ---------------------------------------------------------------
def test_server_accepts_a_request_missing_required_meta() -> None:
    b = discovered()
    request = send_request(b, 1, "tools/call", {"name": "x", "_meta": without(CAPS)})
    seq = answer(b, 1, {"content": []})
    [v] = found(b.records, "meta.malformed-accepted")
    assert v.msgs == [request, seq]
    assert "lacks clientCapabilities" in v.message
    assert "-32602" in v.message


def test_server_rejecting_or_client_info_only_missing_is_fine() -> None:
    b = discovered()
    send_request(b, 1, "tools/call", {"name": "x", "_meta": without(PV, CAPS)})
    b.error(1, -32602, "Invalid params")
    send_request(b, 2, "tools/call", {"name": "x", "_meta": without(INFO)})
    answer(b, 2, {"content": []})  # clientInfo is not required
    assert found(b.records, "meta.malformed-accepted") == []


def test_a_legacy_server_answering_a_meta_less_request_is_not_judged() -> None:
    b = RecordBuilder(modern=True)
    b.request("tools/list", id=1)
    send_request(b, 2, "tools/call", {"name": "x"})
    b.send({"jsonrpc": "2.0", "id": 1, "result": {"tools": []}}, "s2c")
    b.send({"jsonrpc": "2.0", "id": 2, "result": {"content": []}}, "s2c")
    assert found(b.records, "meta.malformed-accepted") == []
