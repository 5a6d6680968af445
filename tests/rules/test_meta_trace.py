"""W3C trace context in ``_meta``: meta.trace-context."""

from __future__ import annotations

import pytest

from mcpeek.rules.families.meta_trace import (
    baggage_problem,
    traceparent_problem,
    tracestate_problem,
)
from tests.rules.test_meta import found, legacy
from tests.rules.test_results import answer, discovered

# -- meta.trace-context --------------------------------------------------------------------
GOOD_PARENT = "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01"


@pytest.mark.parametrize(
    ("value", "why"),
    [
        (GOOD_PARENT, None),
        ("01-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01-future", None),
        ("00-0AF7651916CD43DD8448EB211C80319C-00f067aa0ba902b7-01", "lower-case hex"),
        ("00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7", "lower-case hex"),
        ("ff-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01", "version ff"),
        ("00-00000000000000000000000000000000-00f067aa0ba902b7-01", "trace-id is all zeros"),
        ("00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01", "parent-id is all zeros"),
        ("00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01-x", "exactly four fields"),
    ],
)
def test_traceparent(value: str, why: str | None) -> None:
    problem = traceparent_problem(value)
    assert problem is None if why is None else (problem is not None and why in problem)


def test_tracestate_and_baggage() -> None:
    assert tracestate_problem("congo=t61rcWkgMzE,rojo=00f067aa0ba902b7") is None
    assert tracestate_problem("fw529a3039@dt=ZmYtMjk1LjM, ,congo=x") is None
    assert tracestate_problem("") is None
    assert tracestate_problem("Congo=x") is not None
    assert tracestate_problem("congo=bad,value") is not None
    assert tracestate_problem(",".join(f"k{i}=v" for i in range(33))) is not None
    assert baggage_problem("userId=alice,serverNode=DF%2028,isProduction=false") is None
    assert baggage_problem("key1=value1;property1;property2, key2 = value2") is None
    assert baggage_problem("key with space=1") is not None
    assert baggage_problem('k="quoted"') is not None
    assert baggage_problem("") is not None


def test_trace_context_in_meta() -> None:
    b = discovered()
    b.request("tools/call", {"name": "t"}, id=1, meta={"traceparent": GOOD_PARENT})
    answer(b, 1, {"content": []})
    b.request("tools/call", {"name": "t"}, id=2, meta={"traceparent": "abc", "baggage": 5})
    seq = b.last.seq
    answer(b, 2, {"content": []})
    v, w = found(b.records, "meta.trace-context")
    assert v.msgs == w.msgs == [seq]
    assert "traceparent 'abc'" in v.message
    assert "baggage 5: not a string" in w.message


def test_trace_context_is_a_modern_rule() -> None:
    b = legacy()
    b.request("tools/call", {"name": "t"}, id=1, meta={"traceparent": "abc"})
    b.result(1, {"content": []})
    assert found(b.records, "meta.trace-context") == []
