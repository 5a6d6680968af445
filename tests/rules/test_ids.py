"""JSON-RPC ids: id.null, id.type, id.reused."""

from __future__ import annotations

from mcpeek.inspector.testing.records import RecordBuilder, modern_meta
from mcpeek.rules.families.ids import UsedIds
from mcpeek.rules.testing import lint_records
from tests.rules.test_envelope import (
    family,
    found,
    initialize,
    shown,
)


# -- id.null ----------------------------------------------------------------------------
def test_null_id_on_request_and_result() -> None:
    b = RecordBuilder()
    request = b.raw('{"jsonrpc":"2.0","id":null,"method":"ping"}')
    result = b.raw('{"jsonrpc":"2.0","id":null,"result":{}}', "s2c")
    violations = found(b.records, "id.null")
    assert [v.msgs for v in violations] == [[request.seq], [result.seq]]
    assert "request has a null id" in violations[0].message


def test_null_id_error_without_an_unreadable_request() -> None:
    b = RecordBuilder()
    initialize(b)
    b.request("tools/call", {"name": "t"}, id=1)
    error = b.raw('{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"x"}}', "s2c")
    (v,) = found(b.records, "id.null")
    assert v.msgs == [error.seq] and "unreadable" in v.message


def test_null_id_error_for_unreadable_requests_is_allowed() -> None:
    b = RecordBuilder()
    initialize(b)
    b.raw("{not json")
    b.raw('{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}', "s2c")
    b.raw('{"jsonrpc":"2.0","id":1.5,"method":"ping"}')
    b.raw('{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid"}}', "s2c")
    # an error without an id (rejecting a notification) is not a null id either
    b.raw('{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid"}}', "s2c")
    assert found(b.records, "id.null") == []
    assert found(b.records, "response.unknown-id") == []


# -- id.type ----------------------------------------------------------------------------
def test_id_type() -> None:
    b = RecordBuilder()
    initialize(b)
    floating = b.raw('{"jsonrpc":"2.0","id":1.5,"method":"ping"}')
    boolean = b.raw('{"jsonrpc":"2.0","id":true,"method":"ping"}')
    obj = b.raw('{"jsonrpc":"2.0","id":{"n":1},"method":"ping"}')
    violations = found(b.records, "id.type")
    assert [v.msgs for v in violations] == [[floating.seq], [boolean.seq], [obj.seq]]
    assert "1.5" in violations[0].message and "boolean" in violations[1].message
    assert "object" in violations[2].message


def test_id_type_quiet_on_strings_integers_and_null() -> None:
    b = RecordBuilder()
    initialize(b)
    b.request("ping", id="abc")
    b.request("ping", id=-7)
    b.request("ping", id=2**40)
    b.raw('{"jsonrpc":"2.0","id":null,"method":"ping"}')  # id.null's
    assert found(b.records, "id.type") == []


# -- id.reused --------------------------------------------------------------------------
def test_reused_while_in_flight_modern() -> None:
    b = RecordBuilder(modern=True)
    first = b.request("tools/call", {"name": "slow"}, id=5)
    second = b.request("tools/call", {"name": "other"}, id=5)
    (v,) = found(b.records, "id.reused")
    assert v.msgs == [first.seq, second.seq]
    assert "id 5 is still in flight from the client" in v.message


def test_reuse_after_answer_or_cancel_is_fine_modern() -> None:
    b = RecordBuilder(modern=True)
    b.request("tools/call", {"name": "a"}, id=1)
    b.result(1, {"content": []})
    b.request("tools/call", {"name": "b"}, id=1)  # answered: free again
    b.notify("notifications/cancelled", {"requestId": 1}, dir="c2s")
    b.request("tools/call", {"name": "c"}, id=1)  # cancelled: free again
    b.result(1, {"content": []})
    b.request("tools/call", {"name": "d"}, id="1")  # "1" is not 1
    b.request("tools/call", {"name": "e"}, id=2)
    b.input_required(2, state="s")
    b.request(
        "tools/call", {"name": "e", "requestState": "s", "inputResponses": {}}, id=3
    )  # a retry with a new id
    assert found(b.records, "id.reused") == []


def test_reused_in_legacy_session_after_answer() -> None:
    b = RecordBuilder()
    initialize(b)
    b.request("ping", id=1)
    b.result(1)
    b.request("ping", id=2)
    b.result(2)
    again = b.request("ping", id=1)
    b.result(1)
    (v,) = found(b.records, "id.reused")
    assert v.msgs == [again.seq] and "already used by the client in this session" in v.message


def test_legacy_sides_have_their_own_ids() -> None:
    b = RecordBuilder()
    initialize(b, id=1)
    b.request("ping", id=1, dir="s2c")  # the server's own id 1
    b.result(1, dir="c2s")
    b.request("ping", id=2, dir="s2c")
    b.result(2, dir="c2s")
    b.request("ping", id=2)
    b.result(2)
    assert found(b.records, "id.reused") == []


def test_dual_era_probe_then_initialize_with_the_same_id() -> None:
    meta = modern_meta()
    # a legacy server rejects the probe
    b = RecordBuilder()
    b.request("server/discover", id=0, meta=meta)
    b.error(0, -32601, "Method not found")
    initialize(b, id=0)
    b.request("ping", id=1)
    b.result(1)
    assert family(b.records) == [], shown(family(b.records))
    # a legacy server ignores the probe: the client gives up and initializes
    b = RecordBuilder()
    b.request("server/discover", id=0, meta=meta)
    b.wait(5)
    initialize(b, id=0)
    assert family(b.records) == [], shown(family(b.records))


def test_a_timed_out_request_is_still_in_flight_for_its_id() -> None:
    # Correlation retires an overdue request, but nothing answered or cancelled it.
    b = RecordBuilder(modern=True)
    first = b.request("tools/call", {"name": "slow"}, id=7)
    b.wait(5)
    again = b.request("tools/call", {"name": "slow"}, id=7)
    (v,) = [x for x in lint_records(b.records, timeout=1.0) if x.rule == "id.reused"]
    assert v.msgs == [first.seq, again.seq] and "id 7 is still in flight" in v.message


def test_the_oldest_of_many_unanswered_requests_is_not_forgotten() -> None:
    # The rule keeps no table of its own (it had a bounded one, which forgot the
    # oldest requests still in flight): what is in flight is correlation's.
    b = RecordBuilder(modern=True)
    first = b.request("tools/call", {"name": "a"}, id=0)
    for n in range(1, 6000):
        b.request("tools/call", {"name": "a"}, id=n)
    again = b.request("tools/call", {"name": "b"}, id=0)
    (v,) = found(b.records, "id.reused")
    assert v.msgs == [first.seq, again.seq]


def test_a_reused_id_waiting_behind_a_newer_request_is_still_in_flight() -> None:
    b = RecordBuilder(modern=True)
    first = b.request("tools/call", {"name": "a"}, id=1)
    second = b.request("tools/call", {"name": "b"}, id=1)
    b.result(1, {"content": []})  # the newer one is answered; the first still waits
    third = b.request("tools/call", {"name": "c"}, id=1)
    found_ = found(b.records, "id.reused")
    assert [v.msgs for v in found_] == [[first.seq, second.seq], [first.seq, third.seq]]


def test_two_overdue_requests_with_one_id_then_one_late_answer() -> None:
    # The late answer goes to one of them; the other has still had none.
    b = RecordBuilder(modern=True)
    first = b.request("tools/call", {"name": "a"}, id=1)
    second = b.request("tools/call", {"name": "b"}, id=1)
    b.wait(100)
    b.request("ping", id=50)
    b.result(50, {})
    b.wait(1)
    b.result(1, {"content": []})
    again = b.request("ping", id=1)
    found_ = [v for v in lint_records(b.records) if v.rule == "id.reused"]
    assert [v.msgs for v in found_] == [[first.seq, second.seq], [second.seq, again.seq]]


def test_an_mrtr_retry_is_in_flight_though_its_first_attempt_was_cancelled() -> None:
    # mrtr: the retry and the original are independent requests; basic: "The request
    # ID MUST NOT match the ID of any other request the sender has issued and not yet
    # received a response for." Cancelling id 1 leaves the retry (id 2) in flight.
    b = RecordBuilder(modern=True)
    b.request("tools/call", {"name": "t"}, id=1)
    b.input_required(1, state="s1")
    retry = b.request("tools/call", {"name": "t", "requestState": "s1", "inputResponses": {}}, id=2)
    b.notify("notifications/cancelled", {"requestId": 1}, dir="c2s")
    again = b.request("ping", id=2)
    (v,) = found(b.records, "id.reused")
    assert v.msgs == [retry.seq, again.seq]


def test_used_ids_stay_compact() -> None:
    used = UsedIds()
    for n in range(100_000):
        used.add(n)
    used.add("x")
    for n in (200_005, 200_003, 200_004):
        used.add(n)
    assert len(used) == 3  # two ranges and one string
    assert 99_999 in used and 100_000 not in used and 200_004 in used and "x" in used
    used.add(-1)
    used.add(100_000)
    assert len(used) == 3 and -1 in used and 100_000 in used
