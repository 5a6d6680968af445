"""Protocol versions: version.* (the -32022 error, server/discover, removed methods)."""

from __future__ import annotations

from mcpeek.inspector.testing.records import RecordBuilder
from mcpeek.rules.testing import fired
from tests.rules.test_lifecycle import (
    LEGACY,
    MODERN_META,
    SERVER_INFO,
    handshake,
    modern_discover,
)


def test_unsupported_version_error_without_data() -> None:
    b = RecordBuilder(modern=True)
    b.request("tools/list", id=1)
    bad = b.error(1, -32022, "Unsupported protocol version", data={"supported": "2026-07-28"})
    (v,) = fired(b.records, "version.unsupported-error-shape")
    assert v.msgs == [bad.seq]
    assert "data.supported (array) and data.requested" in v.message


def test_unsupported_version_error_well_formed() -> None:
    b = RecordBuilder(modern=True)
    b.request("tools/list", id=1)
    b.error(
        1,
        -32022,
        "Unsupported protocol version",
        data={"supported": ["2026-07-28"], "requested": "1900-01-01"},
    )
    assert fired(b.records, "version.unsupported-error-shape") == []


def test_discover_method_not_found_from_a_modern_server() -> None:
    b = RecordBuilder(modern=True)
    req = b.request("server/discover", id=1)
    err = b.error(1, -32601, "Method not found")
    b.request("tools/list", id=2)
    res = b.result(2, {"tools": [], "_meta": SERVER_INFO})
    (v,) = fired(b.records, "version.discover-missing")
    assert v.msgs == [req.seq, res.seq, err.seq]
    assert "method-not-found" in v.message


def test_discover_method_not_found_from_a_legacy_server_is_a_probe() -> None:
    b = RecordBuilder(modern=True)
    b.request("server/discover", id=1)
    b.error(1, -32601, "Method not found")
    b.request("tools/list", id=2)
    b.send({"jsonrpc": "2.0", "id": 2, "result": {"tools": []}}, "s2c")  # a legacy answer
    assert fired(b.records, "version.discover-missing") == []
    b2 = RecordBuilder()
    b2.request("server/discover", id=1, meta=MODERN_META)
    b2.error(1, -32601, "Method not found")
    handshake(b2, id=2)
    b2.request("tools/list", id=3)
    b2.result(3, {"tools": [], "_meta": SERVER_INFO})
    assert fired(b2.records, "version.discover-missing") == []


def test_ping_in_the_modern_era() -> None:
    b = RecordBuilder(modern=True)
    modern_discover(b)
    ping = b.request("ping", id=2)
    b.result(2)
    (v,) = fired(b.records, "version.removed-method")
    assert v.msgs == [ping.seq]
    assert "ping" in v.message and "client" in v.message


def test_server_elicitation_complete_and_core_tasks_in_the_modern_era() -> None:
    b = RecordBuilder(modern=True)
    modern_discover(b)
    done = b.notify("notifications/elicitation/complete", {"elicitationId": "e"})
    tasks = b.request("tasks/get", {"taskId": "t"}, id=3)
    b.result(3, {})
    found = fired(b.records, "version.removed-method")
    assert [v.msgs for v in found] == [[done.seq], [tasks.seq]]


def test_tasks_get_with_the_tasks_extension_is_fine() -> None:
    b = RecordBuilder(modern=True)
    modern_discover(b, {"tools": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}})
    b.request("tasks/get", {"taskId": "t"}, id=3)
    b.result(3, {})
    result = b.request("tasks/result", {"taskId": "t"}, id=4)
    found = fired(b.records, "version.removed-method")
    assert [v.msgs for v in found] == [[result.seq]]


def test_initialize_after_a_modern_only_discover() -> None:
    b = RecordBuilder()
    b.request("server/discover", id=1, meta=MODERN_META)
    disc = b.result(
        1, {"resultType": "complete", "supportedVersions": ["2026-07-28"], "capabilities": {}}
    )
    init = b.request("initialize", {"protocolVersion": LEGACY, "capabilities": {}}, id=2)
    (v,) = fired(b.records, "version.removed-method")
    assert v.msgs == [disc.seq, init.seq]
    assert "initialize" in v.message


def test_initialize_after_a_dual_era_discover_listing_a_legacy_version() -> None:
    b = RecordBuilder()
    b.request("server/discover", id=1, meta=MODERN_META)
    b.error(
        1,
        -32022,
        "Unsupported protocol version",
        data={"supported": ["2025-11-25"], "requested": "2026-07-28"},
    )
    b.request("initialize", {"protocolVersion": LEGACY, "capabilities": {}}, id=2)
    assert fired(b.records, "version.removed-method") == []


def test_legacy_ping_is_not_a_removed_method() -> None:
    b = RecordBuilder()
    handshake(b)
    b.request("ping", id=1)
    b.result(1)
    b.request("ping", id=2, dir="s2c")
    b.result(2, dir="c2s")
    assert fired(b.records, "version.removed-method") == []


def test_ping_after_a_rejected_probe_counts_once_the_server_proves_modern() -> None:
    b = RecordBuilder(modern=True)
    b.request("server/discover", id=1)
    b.error(1, -32601, "Method not found")
    b.request("ping", id=2)  # the server looked legacy: not judged
    b.result(2)
    b.request("tools/list", id=3)
    b.result(3, {"tools": [], "_meta": SERVER_INFO})  # …but it is modern
    ping = b.request("ping", id=4)
    (v,) = fired(b.records, "version.removed-method")
    assert v.msgs == [ping.seq]
