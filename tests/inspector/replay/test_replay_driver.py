"""The replay driver over a fake transport, and the report it leads to."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterable
from typing import Any

from mcpeek.inspector.analysis import analyze
from mcpeek.inspector.replay.canonical import parse_pointers
from mcpeek.inspector.replay.replay import Replayer
from mcpeek.inspector.replay.replay_plan import ReplayPlan, build_plan
from mcpeek.inspector.replay.replay_report import compare_flow, text_lines, write_json
from mcpeek.inspector.replay.replay_result import LiveFlow
from mcpeek.inspector.replay.replay_transport import Closed, Deliver, Outgoing
from mcpeek.inspector.testing.records import RecordBuilder

Message = dict[str, Any]
Handler = Callable[[Message], Iterable[Message]]


class FakeServer:
    """A transport whose 'server' is a function from a message to the messages it sends."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.sent: list[Message] = []
        self.deliver: Deliver | None = None
        self.closed: Closed | None = None

    async def start(self, deliver: Deliver, closed: Closed) -> None:
        self.deliver, self.closed = deliver, closed

    async def send(self, item: Outgoing) -> None:
        if item.data is None:
            return
        message = json.loads(item.data)
        self.sent.append(message)
        loop = asyncio.get_running_loop()
        for out in self.handler(message):
            assert self.deliver is not None
            loop.call_soon(self.deliver, json.dumps(out).encode())

    async def close(self) -> None:
        pass


def plan_of(b: RecordBuilder) -> ReplayPlan:
    return build_plan(b.records, analyze(b.records).flows or [], b.header.transport)


def replay(
    plan: ReplayPlan, handler: Handler, timeout: float = 2.0
) -> tuple[list[LiveFlow], FakeServer]:
    server = FakeServer(handler)
    flows = asyncio.run(Replayer(plan, server, timeout=timeout).run())
    return flows, server


def result(message: Message, body: dict[str, Any]) -> Message:
    return {"jsonrpc": "2.0", "id": message["id"], "result": body}


def weather(text: str) -> Handler:
    def handle(message: Message) -> Iterable[Message]:
        if "id" in message and "method" in message:
            yield result(message, {"content": [{"type": "text", "text": text}]})

    return handle


def weather_capture() -> RecordBuilder:
    b = RecordBuilder()
    b.request("tools/call", {"name": "get_weather", "arguments": {"city": "Paris"}}, id="w-1")
    b.result("w-1", {"content": [{"type": "text", "text": "Sunny in Paris"}]})
    b.request("tools/call", {"name": "get_weather", "arguments": {"city": "Oslo"}}, id=40)
    b.result(40, {"content": [{"type": "text", "text": "Sunny in Paris"}]})
    return b


def test_requests_get_new_ids_and_matching_answers_are_the_same() -> None:
    flows, server = replay(plan_of(weather_capture()), weather("Sunny in Paris"))
    assert [m["id"] for m in server.sent] == [1, 2]
    assert server.sent[0]["params"]["arguments"] == {"city": "Paris"}
    reports = [compare_flow(f) for f in flows]
    assert all(r.same for r in reports)
    assert reports[0].recorded_ids == ["w-1"] and reports[0].live_ids == [1]


def test_a_changed_answer_is_a_difference_named_by_path() -> None:
    flows, _ = replay(plan_of(weather_capture()), weather("Rainy in Paris"))
    report = compare_flow(flows[0])
    assert not report.same
    assert [(d.path, d.recorded, d.live) for d in report.differences] == [
        ("/result/content/0/text", "Sunny in Paris", "Rainy in Paris")
    ]
    lines = text_lines(report)
    assert lines[0] == 'flow 1 tools/call get_weather (id "w-1" → 1): DIFFERENT'
    assert '  - /result/content/0/text: "Sunny in Paris"' in lines
    assert '  + /result/content/0/text: "Rainy in Paris"' in lines
    ignored = compare_flow(flows[0], parse_pointers(["/result/content/0/text"]))
    assert ignored.same


def confirm_capture() -> RecordBuilder:
    b = RecordBuilder(modern=True)
    ask = {"ask": {"method": "elicitation/create", "params": {"message": "Proceed?"}}}
    b.request("tools/call", {"name": "confirm"}, id=1)
    b.input_required(1, state="recorded-state", requests=ask)
    answer = {"ask": {"action": "accept", "content": {"ok": True}}}
    b.request(
        "tools/call",
        {"name": "confirm", "requestState": "recorded-state", "inputResponses": answer},
        id=2,
    )
    b.result(2, {"content": [{"type": "text", "text": "confirmed"}]})
    return b


def mrtr_server(states: list[str], *, asks: bool = True) -> Handler:
    ask = {"ask": {"method": "elicitation/create", "params": {"message": "Proceed?"}}}

    def handle(message: Message) -> Iterable[Message]:
        params = message.get("params", {})
        if not asks:
            yield result(message, {"resultType": "complete", "content": []})
        elif "requestState" not in params:
            states.append(f"live-state-{len(states)}")
            body = {"resultType": "input_required", "inputRequests": ask}
            yield result(message, {**body, "requestState": states[-1]})
        elif params["requestState"] == states[-1] and params["inputResponses"]["ask"]:
            yield result(
                message,
                {"resultType": "complete", "content": [{"type": "text", "text": "confirmed"}]},
            )
        else:
            yield {
                "jsonrpc": "2.0",
                "id": message["id"],
                "error": {"code": -32602, "message": "bad state"},
            }

    return handle


def test_an_mrtr_retry_carries_the_state_the_live_server_issued() -> None:
    states: list[str] = []
    flows, server = replay(plan_of(confirm_capture()), mrtr_server(states))
    first, retry = server.sent
    assert (first["id"], retry["id"]) == (1, 2)
    assert "requestState" not in first["params"]
    assert retry["params"]["requestState"] == "live-state-0" == states[0]
    assert retry["params"]["inputResponses"] == {
        "ask": {"action": "accept", "content": {"ok": True}}
    }
    (flow,) = flows
    report = compare_flow(flow)
    assert report.same, text_lines(report)  # the opaque state differs, and does not count
    assert report.recorded_ids == [1, 2] and report.live_ids == [1, 2]


def test_a_live_server_that_needs_no_input_ends_the_chain_as_a_difference() -> None:
    flows, server = replay(plan_of(confirm_capture()), mrtr_server([], asks=False))
    assert len(server.sent) == 1  # the recorded retry is not sent
    report = compare_flow(flows[0])
    assert not report.same
    assert any("without asking for input" in p for p in report.problems)
    assert ("/result/resultType", "input_required", "complete") in [
        (d.path, d.recorded, d.live) for d in report.differences
    ]


def test_server_requests_get_the_recorded_answers_and_progress_is_counted() -> None:
    b = RecordBuilder()
    b.request("tools/call", {"name": "confirm", "_meta": {"progressToken": "p"}}, id=1)
    b.notify("notifications/progress", {"progressToken": "p", "progress": 1})
    b.request("elicitation/create", {"message": "Proceed?"}, id=0, dir="s2c")
    b.result(0, {"action": "accept"}, dir="c2s")
    b.result(1, {"content": []})
    answers: list[Message] = []

    def handle(message: Message) -> Iterable[Message]:
        if message.get("method") == "tools/call":
            token = message["params"]["_meta"]["progressToken"]
            yield {
                "jsonrpc": "2.0",
                "method": "notifications/progress",
                "params": {"progressToken": token, "progress": 1},
            }
            yield {
                "jsonrpc": "2.0",
                "method": "notifications/progress",
                "params": {"progressToken": token, "progress": 2},
            }
            yield {
                "jsonrpc": "2.0",
                "id": "s1",
                "method": "elicitation/create",
                "params": {"message": "Proceed?"},
            }
            yield {"jsonrpc": "2.0", "id": "s2", "method": "roots/list"}
        elif "result" in message or "error" in message:
            answers.append(message)
            if len(answers) == 2:
                yield {"jsonrpc": "2.0", "id": 1, "result": {"content": []}}

    flows, _ = replay(plan_of(b), handle)
    by_id = {a["id"]: a for a in answers}
    assert by_id["s1"] == {"jsonrpc": "2.0", "id": "s1", "result": {"action": "accept"}}
    assert by_id["s2"]["error"]["code"] == -32601
    report = compare_flow(flows[0])
    assert report.progress == (1, 2)
    assert "progress notifications: 1 recorded, 2 live" in report.problems
    assert any("roots/list" in p for p in report.problems)
    assert any("elicitation/create" in n for n in report.notes)


def test_a_missing_response_and_an_error_instead_of_a_result() -> None:
    def handle(message: Message) -> Iterable[Message]:
        if message["params"]["arguments"]["city"] == "Oslo":
            yield {
                "jsonrpc": "2.0",
                "id": message["id"],
                "error": {"code": -32602, "message": "no"},
            }

    flows, _ = replay(plan_of(weather_capture()), handle, timeout=0.2)
    silent, failed = (compare_flow(f, timeout=0.2) for f in flows)
    assert silent.problems == ["no live response within 0.2 s; recorded a result"]
    assert failed.problems == ["recorded a result, live an error (-32602: no)"]


def test_a_cancelled_request_is_cancelled_by_its_live_id() -> None:
    b = RecordBuilder()
    b.request("tools/call", {"name": "slow"}, id=7)
    b.notify("notifications/cancelled", {"requestId": 7}, dir="c2s")
    b.request("ping", id=8)
    b.result(8, {})

    def handle(message: Message) -> Iterable[Message]:
        if message.get("method") == "ping":
            yield result(message, {})

    flows, server = replay(plan_of(b), handle)
    assert [m.get("id") for m in server.sent] == [1, None, 2]
    assert server.sent[1]["params"] == {"requestId": 1}
    slow, ping = (compare_flow(f) for f in flows)
    assert slow.same and "no response, as recorded (cancelled)" in slow.notes[0]
    assert ping.same


def test_json_format_is_one_object_per_flow() -> None:
    import io

    flows, _ = replay(plan_of(weather_capture()), weather("Rainy in Paris"))
    out = io.StringIO()
    write_json([compare_flow(f) for f in flows], [], [], out)
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [line["kind"] for line in lines] == ["flow", "flow", "summary"]
    assert lines[0]["differences"][0] == {
        "path": "/result/content/0/text",
        "attempt": 1,
        "recorded": "Sunny in Paris",
        "live": "Rainy in Paris",
    }
    assert lines[2]["different"] == 2  # both calls now say "Rainy in Paris"


def test_a_server_request_the_recorded_client_left_unanswered_is_left_unanswered() -> None:
    # Regression: it got a JSON-RPC error and the flow a problem ("which the recording
    # never did"), a false difference.
    b = RecordBuilder()
    b.request("tools/call", {"name": "get_weather"}, id=5)
    b.request("notifications/tools/list_changed", id="n1", dir="s2c")
    b.result(5, {"content": [{"type": "text", "text": "Sunny"}]})

    def handle(message: Message) -> Iterable[Message]:
        if message.get("method") == "tools/call":
            yield {"jsonrpc": "2.0", "id": "n1", "method": "notifications/tools/list_changed"}
            yield result(message, {"content": [{"type": "text", "text": "Sunny"}]})

    flows, server = replay(plan_of(b), handle)
    assert [m.get("method") for m in server.sent] == ["tools/call"]  # no answer sent
    report = compare_flow(flows[0])
    assert report.same, text_lines(report)
    assert any("not answered, as in the recording" in n for n in report.notes)


DAY = 86_400.0  # a replay timeout no test waits out: a wait for it is the regression
HANG_GUARD = 60.0  # ... which then fails here instead of hanging the suite


def run_unhung(replayer: Replayer) -> list[LiveFlow]:
    """The replay's flows; a replay that waits for its (day-long) timeout fails."""
    return asyncio.run(asyncio.wait_for(replayer.run(), HANG_GUARD))


class FailingServer(FakeServer):
    """A transport whose exchanges fail like an HTTP endpoint answering an error status."""

    async def send(self, item: Outgoing) -> None:
        await super().send(item)
        if item.failed is not None:
            item.failed("HTTP 500 Internal Server Error (boom)")


def test_a_failed_exchange_ends_the_wait_at_once_with_its_reason() -> None:
    # Regression: an HTTP error left the request waiting for the full timeout, then
    # reported as "no live response within N s".
    server = FailingServer(lambda _message: ())
    # A day's timeout: waiting for it instead of the failure would hang the test.
    flows = run_unhung(Replayer(plan_of(weather_capture()), server, timeout=DAY))
    reports = [compare_flow(f, timeout=5) for f in flows]
    assert [r.problems for r in reports] == [
        ["no live response: HTTP 500 Internal Server Error (boom); recorded a result"]
    ] * 2


class DyingServer(FakeServer):
    """Answers the first request, then goes away like a process that exited."""

    async def send(self, item: Outgoing) -> None:
        if self.sent:
            assert self.closed is not None
            asyncio.get_running_loop().call_soon(self.closed, "the server closed its stdout")
            return
        await super().send(item)


def test_a_server_gone_mid_replay_is_the_reason_given_not_the_timeout() -> None:
    # Regression: the flows it left said "no live response within 10 s" though it took
    # no time, and its exit was not mentioned.
    b = weather_capture()
    b.request("ping", id=41)
    b.result(41, {})
    server = DyingServer(weather("Sunny in Paris"))
    replayer = Replayer(plan_of(b), server, timeout=DAY)
    flows = run_unhung(replayer)
    assert replayer.closed_reason == "the server closed its stdout"
    gone = "the server exited (code 1)"
    first, second, ping = (compare_flow(f, timeout=5, closed=gone) for f in flows)
    assert first.same
    assert second.problems == [f"no live response: {gone}; recorded a result"]
    assert ping.problems == [f"not sent: {gone}"]


class RaisingServer(FakeServer):
    """A transport with a bug: sending the second message raises."""

    async def send(self, item: Outgoing) -> None:
        if self.sent:
            raise RuntimeError("boom")
        await super().send(item)


def test_a_transport_that_raises_fails_the_flow_not_the_replay() -> None:
    # Regression: the exception ended the whole replay (a traceback in the CLI).
    notes: list[str] = []
    server = RaisingServer(weather("Sunny in Paris"))
    replayer = Replayer(plan_of(weather_capture()), server, timeout=DAY, on_note=notes.append)
    flows = run_unhung(replayer)
    first, second = (compare_flow(f, timeout=5) for f in flows)
    assert first.same
    assert second.problems == [
        "no live response: could not be sent (RuntimeError: boom); recorded a result"
    ]
