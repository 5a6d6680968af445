"""Multi round-trip requests: InputRequiredResult and the client's retry (mrtr.*)."""

from __future__ import annotations

from mcpeek.inspector.analysis import analyze
from mcpeek.rules.testing import lint_records
from tests.rules.test_results import ELICIT, answer, ask, caps, discovered, found


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
