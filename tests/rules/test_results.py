"""Results of a modern server: result.result-type-* (and helpers the meta, mrtr tests share)."""

from __future__ import annotations

from typing import Any

from mcpeek.inspector.analysis import analyze
from mcpeek.inspector.records import AnyRecord
from mcpeek.inspector.testing.records import RecordBuilder, modern_meta
from mcpeek.rules.engine import Reported
from mcpeek.rules.testing import lint_records

PREFIXES = ("result.", "mrtr.", "meta.")
SERVER_META = {"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}}
ELICIT = {"who": {"method": "elicitation/create", "params": {"message": "who?"}}}


def family(records: list[AnyRecord]) -> list[Reported]:
    """What the results and meta families (and a crashed rule) report."""
    return [
        v
        for v in lint_records(records)
        if v.rule.startswith(PREFIXES) or v.rule == "inspector.rule-crashed"
    ]


def found(records: list[AnyRecord], rule: str) -> list[Reported]:
    return [v for v in family(records) if v.rule == rule]


def shown(violations: list[Reported]) -> str:
    return "\n".join(f"{v.rule} {v.msgs}: {v.message}" for v in violations)


def caps(**capabilities: Any) -> dict[str, Any]:
    """A per-request ``_meta`` declaring ``capabilities``."""
    return modern_meta(**{"io.modelcontextprotocol/clientCapabilities": capabilities})


def answer(b: RecordBuilder, id: Any, body: dict[str, Any] | None = None) -> int:
    """A conformant modern result (resultType, serverInfo); returns its seq."""
    full = {"resultType": "complete", **(body or {})}
    full.setdefault("_meta", SERVER_META)
    b.send({"jsonrpc": "2.0", "id": id, "result": full}, "s2c")
    return b.last.seq


def ask(
    b: RecordBuilder,
    id: Any,
    *,
    state: str | None = None,
    requests: dict[str, Any] | None = None,
    **extra: Any,
) -> int:
    """A modern ``input_required`` result; returns its seq."""
    body: dict[str, Any] = {"resultType": "input_required", "_meta": SERVER_META, **extra}
    if requests is not None:
        body["inputRequests"] = requests
    if state is not None:
        body["requestState"] = state
    b.send({"jsonrpc": "2.0", "id": id, "result": body}, "s2c")
    return b.last.seq


def bare(b: RecordBuilder, id: Any, body: dict[str, Any]) -> int:
    """A result exactly as given (no resultType, no serverInfo added)."""
    b.send({"jsonrpc": "2.0", "id": id, "result": body}, "s2c")
    return b.last.seq


def discovered() -> RecordBuilder:
    """A modern conversation whose server answered server/discover."""
    b = RecordBuilder(modern=True)
    b.request("server/discover", id="d")
    answer(
        b,
        "d",
        {
            "supportedVersions": ["2026-07-28"],
            "capabilities": {"tools": {}, "prompts": {}, "resources": {}},
            "ttlMs": 0,
            "cacheScope": "public",
        },
    )
    return b


def sdk_like_conversation() -> RecordBuilder:
    """A conformant modern conversation, as the official SDK produces it (MRTR included)."""
    b = discovered()
    meta = caps(elicitation={"form": {}, "url": {}})
    b.request("tools/list", id=1, meta=meta)
    answer(
        b,
        1,
        {
            "tools": [
                {"name": "greet", "inputSchema": {"type": "object"}, "_meta": {"com.x/ui": 1}}
            ],
            "ttlMs": 0,
            "cacheScope": "private",
        },
    )
    form = {
        "method": "elicitation/create",
        "params": {
            "message": "Your name?",
            "mode": "form",
            "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
        },
    }
    b.request("tools/call", {"name": "greet", "arguments": {}}, id=2, meta=meta)
    ask(b, 2, state="v1.opaque", requests={"__main__:ask_name": form})
    b.request(
        "tools/call",
        {
            "name": "greet",
            "arguments": {},
            "inputResponses": {"__main__:ask_name": {"action": "accept", "content": {"n": 1}}},
            "requestState": "v1.opaque",
        },
        id=3,
        meta={**meta, "io.modelcontextprotocol/logLevel": "info"},
    )
    b.notify("notifications/message", {"level": "info", "data": "greeting"})
    answer(b, 3, {"content": [{"type": "text", "text": "hello"}], "isError": False})
    # a state-only round: the client may retry at once
    b.request("prompts/get", {"name": "p"}, id=4, meta=meta)
    ask(b, 4, state="st")
    b.request("prompts/get", {"name": "p", "requestState": "st"}, id=5, meta=meta)
    answer(b, 5, {"messages": []})
    return b


# -- conformant traffic --------------------------------------------------------------------
def test_sdk_like_modern_conversation_is_clean() -> None:
    b = sdk_like_conversation()
    assert family(b.records) == [], shown(family(b.records))
    flows = analyze(b.records).flows
    assert flows is not None
    assert [f.chain for f in flows if len(f.attempts) > 1] == [[2, 3], [4, 5]]


def test_legacy_conversation_has_no_modern_findings() -> None:
    b = RecordBuilder()
    b.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}}, id=0)
    b.result(0, {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}})
    b.notify("notifications/initialized", dir="c2s")
    b.request("tools/call", {"name": "x"}, id=1)
    b.result(1, {"content": []})  # no resultType: fine before 2026-07-28
    b.request("tools/list", id=2)
    b.result(2, {"resultType": "input_required"})  # meaningless in legacy, not ours
    b.request("tools/call", {"name": "x", "requestState": "zz"}, id=3)
    b.result(3, {"content": [], "resultType": "weird"})
    assert family(b.records) == [], shown(family(b.records))


# -- result.result-type-missing ------------------------------------------------------------
def test_result_type_missing_fires_on_a_modern_server() -> None:
    b = discovered()
    b.request("tools/call", {"name": "x"}, id=1)
    seq = bare(b, 1, {"content": [], "_meta": SERVER_META})
    [v] = found(b.records, "result.result-type-missing")
    assert v.msgs == [seq]
    assert "tools/call (id 1) has no resultType" in v.message


def test_result_type_missing_waits_for_a_sign_of_a_modern_server() -> None:
    # A modern client meeting a server that has shown nothing modern yet.
    b = RecordBuilder(modern=True)
    b.request("tools/list", id=1)
    first = bare(b, 1, {"tools": []})
    b.request("tools/call", {"name": "x"}, id=2)
    answer(b, 2, {"content": []})  # resultType: the server is modern after all
    [v] = found(b.records, "result.result-type-missing")
    assert v.msgs == [first]
    assert "tools/list (id 1)" in v.message


def test_result_type_missing_not_for_a_legacy_server_answering_a_modern_client() -> None:
    # e.g. a stateless legacy HTTP server that processes the modern request anyway
    b = RecordBuilder(modern=True)
    b.request("tools/list", id=1)
    bare(b, 1, {"tools": []})
    b.request("tools/call", {"name": "x"}, id=2)
    bare(b, 2, {"content": []})
    assert found(b.records, "result.result-type-missing") == []
    assert found(b.records, "meta.server-info-missing") == []


def test_result_type_missing_not_on_errors_nor_orphans() -> None:
    b = discovered()
    b.request("tools/call", {"name": "x"}, id=1)
    b.error(1, -32602, "bad")
    bare(b, 99, {"content": []})  # answers nothing: response.unknown-id's business
    assert found(b.records, "result.result-type-missing") == []


# -- result.result-type-unknown ------------------------------------------------------------
def test_result_type_unknown_fires_without_an_advertised_extension() -> None:
    b = discovered()
    b.request("tools/call", {"name": "x"}, id=1)
    seq = answer(b, 1, {"resultType": "task"})
    b.request("tools/call", {"name": "x"}, id=2)
    seq2 = answer(b, 2, {"resultType": 5})
    v, w = found(b.records, "result.result-type-unknown")
    assert v.msgs == [seq]
    assert "resultType 'task'" in v.message
    assert w.msgs == [seq2]
    assert "resultType 5" in w.message


def test_result_type_unknown_allows_an_advertised_extension_value() -> None:
    b = discovered()
    meta = caps(extensions={"io.modelcontextprotocol/tasks": {}})
    b.request("tools/call", {"name": "x"}, id=1, meta=meta)
    answer(b, 1, {"resultType": "task"})
    b.request("tools/call", {"name": "x"}, id=2)
    answer(b, 2, {"resultType": "complete"})
    b.request("tools/call", {"name": "x"}, id=3)
    ask(b, 3, state="s")
    assert found(b.records, "result.result-type-unknown") == []
