"""Results and multi round-trip requests (modern): resultType, InputRequiredResult, retries."""

from __future__ import annotations

from typing import Any

from inspector.analysis import analyze
from inspector.records import AnyRecord
from inspector.testing.records import RecordBuilder, modern_meta
from rules.engine import Reported
from rules.testing import lint_records

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


# -- mrtr.method-not-allowed ---------------------------------------------------------------
def test_input_required_on_tools_list_is_not_allowed() -> None:
    b = discovered()
    b.request("tools/list", id=1)
    request = b.last.seq
    seq = ask(b, 1, state="s")
    [v] = found(b.records, "mrtr.method-not-allowed")
    assert v.msgs == [request, seq]
    assert "tools/list (id 1)" in v.message


def test_input_required_on_the_three_methods_is_allowed() -> None:
    b = discovered()
    b.request("tools/call", {"name": "a"}, id=1)
    ask(b, 1, state="s")
    b.request("prompts/get", {"name": "a"}, id=2)
    ask(b, 2, state="s")
    b.request("resources/read", {"uri": "file:///a"}, id=3)
    ask(b, 3, state="s")
    assert found(b.records, "mrtr.method-not-allowed") == []


# -- mrtr.empty ----------------------------------------------------------------------------
def test_input_required_with_nothing_in_it() -> None:
    b = discovered()
    b.request("tools/call", {"name": "a"}, id=1)
    request = b.last.seq
    seq = ask(b, 1)
    b.request("tools/call", {"name": "b"}, id=2)
    ask(b, 2, requests={})
    v, w = found(b.records, "mrtr.empty")
    assert v.msgs == [request, seq]
    assert "neither inputRequests nor requestState" in v.message
    assert "an empty inputRequests and no requestState" in w.message


def test_input_required_with_either_member_is_not_empty() -> None:
    b = discovered()
    b.request("tools/call", {"name": "a"}, id=1)
    ask(b, 1, state="only-state")
    b.request("tools/call", {"name": "b"}, id=2, meta=caps(roots={}))
    ask(b, 2, requests={"r": {"method": "roots/list"}})
    b.request("tools/call", {"name": "c"}, id=3)
    ask(b, 3, state="s", requests={})
    assert found(b.records, "mrtr.empty") == []


# -- mrtr.bad-input-request ----------------------------------------------------------------
def test_input_request_with_a_method_that_is_not_an_input_method() -> None:
    b = discovered()
    b.request("tools/call", {"name": "a"}, id=1)
    request = b.last.seq
    seq = ask(b, 1, requests={"x": {"method": "tools/call", "params": {}}, "y": {"params": {}}})
    [v] = found(b.records, "mrtr.bad-input-request")
    assert v.msgs == [request, seq]
    assert "'x' is 'tools/call'" in v.message
    assert "'y' has no method" in v.message


def test_the_three_input_methods_are_fine() -> None:
    b = discovered()
    meta = caps(elicitation={}, sampling={}, roots={})
    b.request("tools/call", {"name": "a"}, id=1, meta=meta)
    ask(
        b,
        1,
        requests={
            "e": {"method": "elicitation/create", "params": {"message": "m"}},
            "s": {"method": "sampling/createMessage", "params": {"messages": []}},
            "r": {"method": "roots/list"},
        },
    )
    assert found(b.records, "mrtr.bad-input-request") == []
    assert found(b.records, "mrtr.capability-not-declared") == []


# -- mrtr.capability-not-declared ----------------------------------------------------------
def test_input_request_without_the_capability() -> None:
    b = discovered()
    b.request("tools/call", {"name": "a"}, id=1)  # clientCapabilities: {}
    request = b.last.seq
    seq = ask(b, 1, requests=ELICIT)
    [v] = found(b.records, "mrtr.capability-not-declared")
    assert v.msgs == [request, seq]
    assert "'who' (elicitation/create) needs elicitation" in v.message


def test_capability_sub_modes() -> None:
    b = discovered()
    b.request("tools/call", {"name": "a"}, id=1, meta=caps(elicitation={}, sampling={}))
    url = {"method": "elicitation/create", "params": {"mode": "url", "message": "m", "url": "u"}}
    tools = {"method": "sampling/createMessage", "params": {"messages": [], "tools": []}}
    ask(b, 1, requests={"u": url, "t": tools})
    b.request("tools/call", {"name": "b"}, id=2, meta=caps(elicitation={"url": {}}))
    ask(b, 2, requests=ELICIT)  # form mode, but only url declared
    v, w = found(b.records, "mrtr.capability-not-declared")
    assert "needs elicitation.url" in v.message
    assert "needs sampling.tools" in v.message
    assert "needs elicitation.form" in w.message


def test_capability_is_judged_against_that_request() -> None:
    # The first attempt declared elicitation; the retry did not, and is asked again.
    b = discovered()
    b.request("tools/call", {"name": "a"}, id=1, meta=caps(elicitation={}))
    ask(b, 1, state="s1", requests=ELICIT)
    b.request(
        "tools/call",
        {"name": "a", "requestState": "s1", "inputResponses": {"who": {"action": "accept"}}},
        id=2,
    )
    retry = b.last.seq
    seq = ask(b, 2, state="s2", requests=ELICIT)
    [v] = found(b.records, "mrtr.capability-not-declared")
    assert v.msgs == [retry, seq]


def test_declared_capabilities_are_fine() -> None:
    b = discovered()
    b.request("tools/call", {"name": "a"}, id=1, meta=caps(elicitation={"form": {}}))
    ask(b, 1, requests=ELICIT)
    assert found(b.records, "mrtr.capability-not-declared") == []


# -- mrtr.retry-same-id --------------------------------------------------------------------
def test_retry_reusing_the_original_id() -> None:
    b = discovered()
    b.request("tools/call", {"name": "a"}, id=7)
    original = b.last.seq
    ask(b, 7, state="s1")
    b.request("tools/call", {"name": "a", "requestState": "s1"}, id=7)
    retry = b.last.seq
    answer(b, 7, {"content": []})
    [v] = found(b.records, "mrtr.retry-same-id")
    assert v.msgs == [original, retry]
    assert "reuses the original request's id 7" in v.message
    # the analyzer still links it as the retry, and pairs its answer with it
    flows = analyze(b.records).flows
    assert flows is not None
    [chain] = [f for f in flows if len(f.attempts) > 1]
    assert chain.status == "complete"
    assert [a.response is not None for a in chain.attempts] == [True, True]
    assert [v.rule for v in lint_records(b.records) if v.rule.startswith("response.")] == []


def test_retry_with_a_new_id_and_a_string_twin_is_fine() -> None:
    b = discovered()
    b.request("tools/call", {"name": "a"}, id=7)
    ask(b, 7, state="s1")
    b.request("tools/call", {"name": "a", "requestState": "s1"}, id="7")  # "7" is not 7
    answer(b, "7", {"content": []})
    assert found(b.records, "mrtr.retry-same-id") == []


# -- mrtr.request-state-modified -----------------------------------------------------------
def test_retry_with_a_changed_request_state() -> None:
    b = discovered()
    b.request("tools/call", {"name": "a"}, id=1, meta=caps(elicitation={}))
    issued = ask(b, 1, state="s1", requests=ELICIT)
    b.request(
        "tools/call",
        {"name": "a", "requestState": "s1-tampered", "inputResponses": {"who": {}}},
        id=2,
        meta=caps(elicitation={}),
    )
    retry = b.last.seq
    [v] = found(b.records, "mrtr.request-state-modified")
    assert v.msgs == [issued, retry]
    assert "'s1'" in v.message
    assert "carries 's1-tampered'" in v.message


def test_retry_that_drops_the_request_state() -> None:
    b = discovered()
    b.request("tools/call", {"name": "a"}, id=1, meta=caps(elicitation={}))
    ask(b, 1, state="s1", requests=ELICIT)
    b.request("tools/call", {"name": "a", "inputResponses": {"who": {}}}, id=2)
    [v] = found(b.records, "mrtr.request-state-modified")
    assert "but omits it" in v.message


def test_exact_echo_is_fine() -> None:
    b = discovered()
    b.request("tools/call", {"name": "a"}, id=1, meta=caps(elicitation={}))
    ask(b, 1, state="s1", requests=ELICIT)
    b.request(
        "tools/call", {"name": "a", "requestState": "s1", "inputResponses": {"who": {}}}, id=2
    )
    answer(b, 2, {"content": []})
    assert found(b.records, "mrtr.request-state-modified") == []


# -- mrtr.request-state-unsolicited --------------------------------------------------------
def test_retry_with_a_state_the_server_never_issued() -> None:
    b = discovered()
    b.request("tools/call", {"name": "a"}, id=1, meta=caps(elicitation={}))
    issued = ask(b, 1, requests=ELICIT)
    b.request(
        "tools/call", {"name": "a", "requestState": "made-up", "inputResponses": {"who": {}}}, id=2
    )
    retry = b.last.seq
    [v] = found(b.records, "mrtr.request-state-unsolicited")
    assert v.msgs == [issued, retry]
    assert "'made-up'" in v.message
    assert found(b.records, "mrtr.request-state-modified") == []


def test_a_first_request_with_a_state_is_not_a_retry() -> None:
    # A retry of an input_required result this capture never saw (another
    # connection, before the capture began): nothing to compare with.
    b = discovered()
    b.request("tools/call", {"name": "a", "requestState": "from-before"}, id=1)
    answer(b, 1, {"content": []})
    assert found(b.records, "mrtr.request-state-unsolicited") == []
