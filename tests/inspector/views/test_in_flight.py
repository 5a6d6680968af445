"""Requests in flight, and the slow ones: what the viewer's timers and the slow lines
of ``show --follow`` are built on. Time is the capture's (``t``), passed by the test."""

from __future__ import annotations

import pytest

from mcpeek.inspector.analysis import Analyzer, Flow
from mcpeek.inspector.cli.main import main
from mcpeek.inspector.testing.records import RecordBuilder
from mcpeek.inspector.views.in_flight import InFlight, SlowCalls


def fed(b: RecordBuilder, timeout: float = 60.0) -> tuple[Analyzer, InFlight]:
    in_flight = InFlight()
    analyzer = Analyzer([in_flight], timeout=timeout)
    analyzer.feed_all(b.records)
    return analyzer, in_flight


def test_a_request_is_in_flight_until_answered_and_slow_once() -> None:
    b = RecordBuilder(modern=True)
    sent = b.request("tools/call", {"name": "hang", "arguments": {}}, id=1)
    b.request("tools/call", {"name": "quick", "arguments": {}}, id=2)
    b.result(2, {"content": []})
    analyzer, in_flight = fed(b)
    (flow,) = in_flight.flows()
    assert (flow.name, len(in_flight)) == ("hang", 1)
    assert in_flight.newly_slow(sent.t + 4.9, 5.0) == []
    assert in_flight.slow_count(sent.t + 5.0, 5.0) == 1
    assert in_flight.newly_slow(sent.t + 5.0, 5.0) == [flow]
    assert in_flight.newly_slow(sent.t + 9.0, 5.0) == []  # told once
    b.result(1, {"content": []})
    analyzer.feed(b.last)
    assert len(in_flight) == 0 and in_flight.slow_count(sent.t + 9.0, 5.0) == 0


def test_a_chain_waiting_for_its_retry_is_not_in_flight() -> None:
    b = RecordBuilder(modern=True)
    b.request("tools/call", {"name": "confirm", "arguments": {}}, id="a")
    b.input_required("a", state="s1", requests={"ok": {"method": "elicitation/create"}})
    analyzer, in_flight = fed(b)
    assert len(in_flight) == 0  # waiting for the client (a person), not for the server
    retry = {"name": "confirm", "arguments": {}, "requestState": "s1", "inputResponses": {}}
    b.request("tools/call", retry, id="b")
    analyzer.feed(b.last)
    assert [f.name for f in in_flight.flows()] == ["confirm"]  # the retry is in flight


def test_past_the_timeout_a_request_is_unanswered_not_slow() -> None:
    b = RecordBuilder(modern=True)
    sent = b.request("tools/call", {"name": "hang", "arguments": {}}, id=1)
    analyzer, in_flight = fed(b, timeout=10.0)
    told: list[tuple[Flow, float]] = []
    calls = SlowCalls(analyzer, in_flight, 5.0, lambda flow, waited: told.append((flow, waited)))
    calls.tick(sent.t + 6.0)
    assert [(f.name, round(w, 3)) for f, w in told] == [("hang", 6.0)]
    calls.tick(sent.t + 11.0)  # expired: unanswered, out of flight, not told again
    assert len(told) == 1 and len(in_flight) == 0


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf", "1e400", "-0.0"])
def test_show_refuses_a_slow_that_is_no_duration(
    value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["show", "--slow", value, "no-such-file.jsonl"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"mcpeek: --slow {value}: ") and "above 0" in err[0]
