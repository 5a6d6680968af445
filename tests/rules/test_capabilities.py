"""Capabilities: capability.not-declared."""

from __future__ import annotations

from mcpeek.inspector.testing.records import RecordBuilder
from mcpeek.rules.testing import fired
from tests.rules.test_lifecycle import (
    LEGACY,
    handshake,
    modern_discover,
)


def test_legacy_server_samples_without_the_client_capability() -> None:
    b = RecordBuilder()
    handshake(b, client_caps={"roots": {}})
    bad = b.request("sampling/createMessage", {"messages": [], "maxTokens": 1}, id=1, dir="s2c")
    b.request("roots/list", id=2, dir="s2c")  # declared
    (v,) = fired(b.records, "capability.not-declared")
    assert v.msgs == [bad.seq]
    assert "`sampling`" in v.message


def test_legacy_url_elicitation_and_tool_sampling_need_their_sub_capabilities() -> None:
    b = RecordBuilder()
    handshake(b, client_caps={"elicitation": {}, "sampling": {}})
    b.request("elicitation/create", {"message": "m", "requestedSchema": {}}, id=1, dir="s2c")
    url = b.request(
        "elicitation/create", {"mode": "url", "message": "m", "url": "https://x"}, id=2, dir="s2c"
    )
    tools = b.request(
        "sampling/createMessage", {"messages": [], "maxTokens": 1, "tools": []}, id=3, dir="s2c"
    )
    found = fired(b.records, "capability.not-declared")
    assert [v.msgs for v in found] == [[url.seq], [tools.seq]]
    assert "elicitation.url" in found[0].message and "sampling.tools" in found[1].message


def test_client_calls_an_undeclared_server_feature() -> None:
    b = RecordBuilder()
    handshake(b, server_caps={"tools": {}, "resources": {"subscribe": False}})
    b.request("tools/list", id=1)
    prompts = b.request("prompts/list", id=2)
    subscribe = b.request("resources/subscribe", {"uri": "f://a"}, id=3)
    found = fired(b.records, "capability.not-declared")
    init_result = 2
    assert [v.msgs for v in found] == [[init_result, prompts.seq], [init_result, subscribe.seq]]
    assert "`prompts`" in found[0].message and "resources.subscribe" in found[1].message


def test_modern_client_calls_a_feature_discover_did_not_declare() -> None:
    b = RecordBuilder(modern=True)
    modern_discover(b, {"tools": {}})
    bad = b.request("completion/complete", {"ref": {}, "argument": {}}, id=2)
    (v,) = fired(b.records, "capability.not-declared")
    assert v.msgs[-1] == bad.seq and "server/discover" in v.message


def test_server_logs_without_the_logging_capability() -> None:
    b = RecordBuilder()
    handshake(b, server_caps={"tools": {}})
    log = b.notify("notifications/message", {"level": "info", "data": "x"})
    (v,) = fired(b.records, "capability.not-declared")
    assert v.msgs[-1] == log.seq and "`logging`" in v.message


def test_capabilities_unknown_are_not_judged() -> None:
    b = RecordBuilder(modern=True)
    b.request("prompts/list", id=1)  # no server/discover: capabilities unknown
    b.result(1, {"prompts": []})
    b2 = RecordBuilder()
    b2.request("initialize", {"protocolVersion": LEGACY}, id=0)  # no capabilities at all
    b2.request("sampling/createMessage", {"messages": []}, id=5, dir="s2c")
    assert fired(b.records, "capability.not-declared") == []
    assert fired(b2.records, "capability.not-declared") == []
