"""The sans-IO mock server core, fed client messages built from records: no sockets."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import pytest

from mcpeek.inspector.capture.reader import CaptureError
from mcpeek.inspector.replay.canonical import PointerError
from mcpeek.inspector.replay.mock import MockServer, MockSession, Reaction, ServeError
from mcpeek.inspector.testing.records import RecordBuilder, modern_meta


def line(message: dict[str, Any]) -> bytes:
    return msgspec.json.encode({"jsonrpc": "2.0", **message})


def request(id: Any, method: str, params: dict[str, Any] | None = None, **meta: Any) -> bytes:
    body = dict(params or {})
    body["_meta"] = modern_meta(**meta)
    return line({"id": id, "method": method, "params": body})


def decoded(reaction: Reaction) -> list[Any]:
    return [msgspec.json.decode(o.data) for o in reaction.out]


def modern_capture() -> RecordBuilder:
    b = RecordBuilder(modern=True)
    b.request("server/discover", {}, id=1)
    b.result(1, {"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}}})
    b.request("tools/call", {"name": "add", "arguments": {"a": 2, "b": 3}}, id=2)
    b.wait(0.5)
    b.raw('{"jsonrpc":"2.0", "id":2,"result":{"n": 5, "resultType":"complete"}}', "s2c")
    b.request("tools/call", {"name": "add", "arguments": {"a": 2, "b": 3}}, id=3)
    b.result(3, {"n": "second"})
    b.request("tools/call", {"name": "count"}, id=4, meta={"progressToken": "tok"})
    b.wait(0.25)
    b.notify("notifications/progress", {"progressToken": "tok", "progress": 1})
    b.wait(0.25)
    b.result(4, {"counted": 1})
    return b


def session(b: RecordBuilder, **options: Any) -> MockSession:
    return MockServer.from_records(b.records, **options).session()


def test_answers_with_the_recorded_bytes_and_the_live_id() -> None:
    mock = session(modern_capture())
    reaction = mock.receive(
        request("live-7", "tools/call", {"arguments": {"b": 3, "a": 2}, "name": "add"})
    )
    (out,) = reaction.out
    assert (
        out.data == b'{"jsonrpc":"2.0", "id":"live-7","result":{"n": 5, "resultType":"complete"}}'
    )
    assert out.final and out.stream == b'"live-7"'
    assert out.delay == pytest.approx(0.501, abs=0.002)  # the recorded pace


def test_a_key_recorded_twice_is_served_in_order_then_the_last_repeats() -> None:
    mock = session(modern_capture(), timing="fast")
    call = {"name": "add", "arguments": {"a": 2, "b": 3}}
    answers = [decoded(mock.receive(request(i, "tools/call", call)))[0] for i in (10, 11, 12)]
    assert [a["result"]["n"] for a in answers] == [5, "second", "second"]
    assert [a["id"] for a in answers] == [10, 11, 12]
    assert all(o.delay == 0 for o in mock.receive(request(13, "tools/call", call)).out)


def test_progress_comes_first_with_the_live_token_or_not_at_all() -> None:
    mock = session(modern_capture())
    progress, result = decoded(
        mock.receive(request(5, "tools/call", {"name": "count"}, progressToken=99))
    )
    assert progress["params"] == {"progressToken": 99, "progress": 1}
    assert result == {
        "jsonrpc": "2.0",
        "id": 5,
        "result": {"counted": 1, "resultType": "complete", "_meta": result["result"]["_meta"]},
    }
    # no token, no progress; its delay still counts before the response
    (only,) = mock.receive(request(6, "tools/call", {"name": "count"})).out
    assert only.final and only.delay == pytest.approx(0.502, abs=0.003)


def test_handshake_is_answered_whatever_the_client_says_about_itself() -> None:
    mock = session(modern_capture(), timing="fast")
    other = line(
        {"id": 1, "method": "server/discover", "params": {"_meta": {"x": {"different": True}}}}
    )
    (answer,) = decoded(mock.receive(other))
    assert answer["result"]["supportedVersions"] == ["2026-07-28"]


def test_ping_is_always_answered() -> None:
    mock = session(modern_capture())
    assert decoded(mock.receive(line({"id": "p", "method": "ping"}))) == [
        {"jsonrpc": "2.0", "id": "p", "result": {"resultType": "complete"}}
    ]


def test_unknown_method_is_method_not_found() -> None:
    mock = session(modern_capture())
    (error,) = decoded(mock.receive(request(8, "prompts/list")))
    assert error["id"] == 8 and error["error"]["code"] == -32601
    assert "no recorded prompts/list request" in error["error"]["message"]
    assert "tools/call" in error["error"]["message"]


def test_a_miss_names_the_closest_recorded_request_and_the_difference() -> None:
    mock = session(modern_capture())
    reaction = mock.receive(
        request(9, "tools/call", {"name": "add", "arguments": {"a": 7, "b": 3}})
    )
    (error,) = decoded(reaction)
    assert error["error"]["code"] == -32602
    assert error["error"]["message"] == (
        "no recorded tools/call matches; closest: tools/call {name: add, arguments: {a: 2, b: 3}}"
        " — differs at /params/arguments/a: recorded 2, got 7"
    )
    assert error["error"]["data"]["differences"] == [
        {"pointer": "/params/arguments/a", "recorded": 2, "got": 7}
    ]
    assert reaction.note == error["error"]["message"] and mock.misses == [reaction.note]


def test_ignore_pointers_make_a_varying_member_match() -> None:
    b = RecordBuilder(modern=True)
    b.request("tools/call", {"name": "log", "arguments": {"ts": 1, "text": "hi"}}, id=1)
    b.result(1, {"ok": True})
    live = request(2, "tools/call", {"name": "log", "arguments": {"ts": 999, "text": "hi"}})
    assert decoded(session(b).receive(live))[0]["error"]["code"] == -32602
    strict = session(b, ignore=["/params/arguments/ts"])
    assert decoded(strict.receive(live))[0]["result"]["ok"] is True
    with pytest.raises(PointerError):
        MockServer.from_records(b.records, ignore=["params/x"])


def mrtr_capture() -> RecordBuilder:
    b = RecordBuilder(modern=True)
    ask = {"q": {"method": "elicitation/create", "params": {"message": "ok?"}}}
    b.request("tools/call", {"name": "confirm"}, id=1)
    b.input_required(1, state="S1", requests=ask)
    answer = {"q": {"action": "accept", "content": {"ok": True}}}
    b.request(
        "tools/call", {"name": "confirm", "inputResponses": answer, "requestState": "S1"}, id=2
    )
    b.result(2, {"content": [{"type": "text", "text": "confirmed"}]})
    return b


def test_mrtr_chain_replays_and_the_retry_needs_the_issued_state() -> None:
    mock = session(mrtr_capture(), timing="fast")
    retry = {
        "name": "confirm",
        "inputResponses": {"q": {"action": "decline"}},
        "requestState": "S1",
    }
    # a retry before the mock issued S1 is not one this session can answer
    (early,) = decoded(mock.receive(request(10, "tools/call", retry)))
    assert (
        early["error"]["code"] == -32602 and "not issued by this mock" in early["error"]["message"]
    )
    (first,) = decoded(mock.receive(request(11, "tools/call", {"name": "confirm"})))
    assert first["result"]["resultType"] == "input_required" and first["id"] == 11
    (final,) = decoded(mock.receive(request(12, "tools/call", retry)))
    assert final["id"] == 12 and final["result"]["content"][0]["text"] == "confirmed"
    dropped = {"name": "confirm", "inputResponses": {"q": {"action": "accept"}}}
    (again,) = decoded(mock.receive(request(13, "tools/call", dropped)))
    assert again["result"]["resultType"] == "input_required"  # without state: the first call


def legacy_capture() -> RecordBuilder:
    b = RecordBuilder()
    b.request("initialize", {"protocolVersion": "2025-11-25", "clientInfo": {"name": "rec"}}, id=1)
    b.result(1, {"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {"name": "s"}})
    b.notify("notifications/initialized", dir="c2s")
    b.request("roots/list", id=0, dir="s2c")  # the server asks, after initialized
    b.result(0, {"roots": []}, dir="c2s")
    b.request("tools/call", {"name": "confirm"}, id=2)
    b.request("elicitation/create", {"message": "sure?"}, id=1, dir="s2c")
    b.notify("notifications/message", {"level": "info", "data": "asked"})
    b.result(1, {"action": "accept"}, dir="c2s")
    b.result(2, {"content": []})
    return b


def test_legacy_handshake_and_server_requests_at_the_recorded_point() -> None:
    mock = session(legacy_capture(), timing="fast")
    hello = line({"id": 5, "method": "initialize", "params": {"clientInfo": {"name": "other"}}})
    assert decoded(mock.receive(hello))[0]["result"]["serverInfo"] == {"name": "s"}
    (roots,) = decoded(mock.receive(line({"method": "notifications/initialized"})))
    assert roots == {"jsonrpc": "2.0", "id": 0, "method": "roots/list"}
    assert mock.receive(line({"id": 0, "result": {"roots": []}})).out == []
    call = mock.receive(line({"id": 6, "method": "tools/call", "params": {"name": "confirm"}}))
    elicit, log = decoded(call)
    assert elicit["method"] == "elicitation/create" and elicit["id"] == 1
    assert log["method"] == "notifications/message"
    assert not any(o.final for o in call.out)  # the result waits for the client's answer
    (result,) = mock.receive(line({"id": 1, "result": {"action": "accept"}})).out
    assert result.final and result.stream == b"6"
    assert msgspec.json.decode(result.data)["id"] == 6
    # the same call again: the server request gets an id this session has not used
    again = decoded(
        mock.receive(line({"id": 7, "method": "tools/call", "params": {"name": "confirm"}}))
    )
    assert again[0]["method"] == "elicitation/create" and again[0]["id"] != 1
    (late,) = decoded(mock.receive(line({"id": again[0]["id"], "result": {"action": "accept"}})))
    assert late["id"] == 7


def test_cancel_bad_json_and_batches() -> None:
    mock = session(modern_capture())
    cancel = mock.receive(line({"method": "notifications/cancelled", "params": {"requestId": 4}}))
    assert cancel.cancel == b"4" and cancel.out == []
    (parse,) = decoded(mock.receive(b"{nope"))
    assert parse["error"]["code"] == -32700 and parse["id"] is None
    (batch,) = decoded(mock.receive(b"[]"))
    assert batch["error"]["code"] == -32600


def test_forward_mode_hands_misses_over() -> None:
    mock = session(modern_capture(), on_miss="forward")
    reaction = mock.receive(request(8, "prompts/list"))
    assert reaction.forward and reaction.out == [] and reaction.note is not None


def test_captures_that_cannot_be_served(tmp_path: Path) -> None:
    b = RecordBuilder()
    b.request("tools/list", id=1)
    with pytest.raises(ServeError, match="no server side"):
        MockServer.from_records(b.records)
    with pytest.raises(ServeError):
        MockServer.from_capture(b.save(tmp_path / "client-only.jsonl"))
    (tmp_path / "bad.jsonl").write_text("hello\n")
    with pytest.raises(CaptureError):
        MockServer.from_capture(tmp_path / "bad.jsonl")
    assert MockServer.from_capture(modern_capture().save(tmp_path / "ok.jsonl")).era == "modern"


DEEP = b"[" * 5000 + b"]" * 5000


@pytest.mark.parametrize(
    ("data", "answered_id"),
    [
        (DEEP, None),
        (b'{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"a":' + DEEP + b"}}", 9),
        (b'{"jsonrpc":"2.0","method":"notifications/x","params":{"a":' + DEEP + b"}}", None),
        # Decodable, but deeper than matching walks (explaining a miss walks the params).
        (
            b'{"jsonrpc":"2.0","id":"q","method":"tools/call","params":'
            + b'{"a":' * 600
            + b"1"
            + b"}" * 600
            + b"}",
            "q",
        ),
    ],
    ids=["list", "request", "notification", "walked-request"],
)
def test_a_message_nested_too_deep_is_answered_as_unparseable(
    data: bytes, answered_id: Any
) -> None:
    s = session(modern_capture(), timing="fast")
    reaction = s.receive(data)
    [error] = decoded(reaction)
    assert error["id"] == answered_id
    assert error["error"]["code"] == -32700
    assert "nested too deeply" in error["error"]["message"]
    # The session goes on.
    [pong] = decoded(s.receive(line({"id": 10, "method": "ping"})))
    assert pong["id"] == 10


@pytest.mark.parametrize(
    ("data", "answered_id"),
    [
        (b'{"jsonrpc":"2.0","id":2}\n', 2),  # readable: JSON-RPC wants it echoed
        (b'{"jsonrpc":"2.0","id":"x","params":{}}\n', "x"),
        (b'{"jsonrpc":"2.0","id":[1]}\n', None),  # not a valid id: null
        (b"{not json\n", None),  # a parse error: no id to detect
    ],
)
def test_an_invalid_request_is_answered_with_its_id_when_it_can_be_read(
    data: bytes, answered_id: Any
) -> None:
    mock = session(modern_capture())
    (error,) = decoded(mock.receive(data))
    assert error["id"] == answered_id and error["error"]["code"] in (-32600, -32700)
