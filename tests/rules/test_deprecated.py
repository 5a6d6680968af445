"""Deprecated features: deprecated.feature."""

from __future__ import annotations

from mcpeek.inspector.testing.records import RecordBuilder
from mcpeek.rules.testing import fired
from tests.rules.test_lifecycle import (
    handshake,
    modern_discover,
)


def test_modern_sampling_roots_and_logging_are_deprecated() -> None:
    b = RecordBuilder(modern=True)
    modern_discover(b, {"tools": {}, "logging": {}})
    b.request("tools/call", {"name": "t"}, id=2)
    ask = b.input_required(
        2,
        state="s",
        requests={
            "llm": {
                "method": "sampling/createMessage",
                "params": {"messages": [], "maxTokens": 1, "includeContext": "thisServer"},
            },
            "dirs": {"method": "roots/list", "params": {}},
        },
    )
    b.input_required(2, state="s")  # seen already: not reported again
    logged = b.request(
        "tools/call", {"name": "u"}, id=3, meta={"io.modelcontextprotocol/logLevel": "info"}
    )
    found = fired(b.records, "deprecated.feature")
    assert all(v.severity == "info" for v in found)
    assert [v.msgs for v in found] == [[ask.seq]] * 3 + [[logged.seq]]
    text = " | ".join(v.message for v in found)
    assert "Sampling" in text and "Roots" in text and "includeContext" in text
    assert "Logging" in found[-1].message


def test_legacy_sampling_is_not_deprecated_but_include_context_is() -> None:
    b = RecordBuilder()
    handshake(b, client_caps={"sampling": {"context": {}}})
    b.request("sampling/createMessage", {"messages": [], "maxTokens": 1}, id=1, dir="s2c")
    ctx = b.request(
        "sampling/createMessage",
        {"messages": [], "maxTokens": 1, "includeContext": "allServers"},
        id=2,
        dir="s2c",
    )
    (v,) = fired(b.records, "deprecated.feature")
    assert v.msgs == [ctx.seq] and "allServers" in v.message


def test_include_context_before_2025_11_25_is_not_deprecated() -> None:
    b = RecordBuilder()
    handshake(b, client_caps={"sampling": {}}, asked="2025-06-18", answered="2025-06-18")
    b.request(
        "sampling/createMessage",
        {"messages": [], "maxTokens": 1, "includeContext": "thisServer"},
        id=2,
        dir="s2c",
    )
    assert fired(b.records, "deprecated.feature") == []
