"""JSON-RPC error objects: error.*."""

from __future__ import annotations

from mcpeek.inspector.testing.records import RecordBuilder, modern_meta
from tests.rules.test_envelope import (
    family,
    found,
    initialize,
    shown,
)


# -- error objects ----------------------------------------------------------------------
def error_line(b: RecordBuilder, id: int, error: str) -> int:
    b.request("tools/call", {"name": "t"}, id=id)
    return b.raw(f'{{"jsonrpc":"2.0","id":{id},"error":{error}}}', "s2c").seq


def test_error_code_type() -> None:
    b = RecordBuilder()
    initialize(b)
    text = error_line(b, 1, '{"code":"-32603","message":"x"}')
    floating = error_line(b, 2, '{"code":-32603.5,"message":"x"}')
    missing = error_line(b, 3, '{"message":"x"}')
    not_object = error_line(b, 4, '"boom"')
    error_line(b, 5, '{"code":-32603,"message":"fine"}')
    violations = found(b.records, "error.code-type")
    assert [v.msgs for v in violations] == [[text], [floating], [missing], [not_object]]
    assert 'error code "-32603" for tools/call (id 1) is not an integer' in violations[0].message
    assert "has no code" in violations[2].message and '"boom"' in violations[3].message


def test_error_message() -> None:
    b = RecordBuilder()
    initialize(b)
    missing = error_line(b, 1, '{"code":-32603}')
    number = error_line(b, 2, '{"code":-32603,"message":5}')
    error_line(b, 3, '{"code":-32603,"message":""}')  # empty, but a string
    error_line(b, 4, '"boom"')  # error.code-type's
    violations = found(b.records, "error.message")
    assert [v.msgs for v in violations] == [[missing], [number]]
    assert "has no message" in violations[0].message and "5" in violations[1].message


def modern_error(code: int, method: str = "tools/call") -> RecordBuilder:
    b = RecordBuilder(modern=True)
    # The server shows it is modern first: the modern-only rules judge only such a server.
    b.request("server/discover", id=0)
    b.result(0, {"supportedVersions": ["2026-07-28"], "capabilities": {}})
    b.request(method, {"name": "t"}, id=1)
    b.error(1, code, "x")
    return b


def legacy_error(code: int) -> RecordBuilder:
    b = RecordBuilder()
    initialize(b)
    b.request("tools/call", {"name": "t"}, id=1)
    b.error(1, code, "x")
    return b


def test_reserved_code() -> None:
    b = modern_error(-32050)
    (v,) = found(b.records, "error.reserved-code")
    assert v.msgs == [b.last.seq] and "-32050" in v.message and "reserved" in v.message
    for code in (-32020, -32021, -32022, -32042, -32100, -32019, -32602):
        assert found(modern_error(code).records, "error.reserved-code") == [], code
    assert found(legacy_error(-32050).records, "error.reserved-code") == []


def test_legacy_code() -> None:
    b = modern_error(-32002, "resources/read")
    (v,) = found(b.records, "error.legacy-code")
    assert v.msgs == [b.last.seq] and "-32002 (resource not found)" in v.message
    assert "-32602" in v.message
    (v,) = found(modern_error(-32042).records, "error.legacy-code")
    assert "URL elicitation" in v.message
    assert found(modern_error(-32002).records, "error.legacy-range") == []
    assert found(modern_error(-32042).records, "error.reserved-code") == []
    assert found(legacy_error(-32002).records, "error.legacy-code") == []
    assert found(legacy_error(-32042).records, "error.legacy-code") == []


def test_legacy_range() -> None:
    b = modern_error(-32000)
    (v,) = found(b.records, "error.legacy-range")
    assert v.severity == "warning" and v.msgs == [b.last.seq] and "-32000" in v.message
    assert len(found(modern_error(-32019).records, "error.legacy-range")) == 1
    for code in (-32020, -31001, -32600, -32603, 1):
        assert found(modern_error(code).records, "error.legacy-range") == [], code
    assert found(legacy_error(-32001).records, "error.legacy-range") == []


def test_a_legacy_server_rejecting_the_probe_is_not_judged_modern() -> None:
    for code in (-32002, -32000, -32050):
        b = RecordBuilder()
        b.request("server/discover", id=1, meta=modern_meta())
        b.error(1, code, "Server not initialized")
        initialize(b, id=2)
        assert family(b.records) == [], (code, shown(family(b.records)))
