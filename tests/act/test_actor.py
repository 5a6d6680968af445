"""The decision core without sockets: messages in, outcomes out."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from mcpeek.inspector.act.actor import Actor
from mcpeek.inspector.act.faults import parse_fault
from mcpeek.inspector.act.scripts import ScriptError, load_script
from mcpeek.inspector.act.verdicts import Outcome

CALL = b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"add"}}'
RESULT = b'{"jsonrpc":"2.0","id":7,"result":{"content":[]}}'
NOTE = b'{"jsonrpc":"2.0","method":"notifications/progress","params":{}}'


def decide(actor: Actor, *messages: tuple[str, bytes]) -> list[Outcome]:
    async def run() -> list[Outcome]:
        return [await actor.decide(d, "stdio", raw) for d, raw in messages]  # type: ignore[arg-type]

    return asyncio.run(run())


def test_untouched_messages_pass_with_their_bytes() -> None:
    (outcome,) = decide(Actor([parse_fault("~m ping => drop")]), ("c2s", CALL))
    assert outcome.forward == CALL and outcome.untouched


def test_error_on_a_request_answers_in_place_with_its_id() -> None:
    actor = Actor([parse_fault('~m tools/call => error -32603 "boom"')])
    request, response = decide(actor, ("c2s", CALL), ("s2c", RESULT))
    assert request.forward is None
    assert json.loads(request.answer or b"") == {
        "jsonrpc": "2.0",
        "id": 7,
        "error": {"code": -32603, "message": "boom"},
    }
    assert request.act is not None and request.act.action == "reply"
    assert request.act.raw == CALL.decode()  # the original is kept
    assert response.act is not None and response.made == "edit"  # a response: replaced


def test_k_tells_the_response_from_the_request() -> None:
    actor = Actor([parse_fault("~m tools/call & ~k response => drop")])
    request, response = decide(actor, ("c2s", CALL), ("s2c", RESULT))
    assert request.untouched
    assert response.forward is None and response.act is not None
    assert response.act.action == "drop"


def test_error_on_a_notification_does_not_apply() -> None:
    (outcome,) = decide(Actor([parse_fault('~a => error 1 "x"')]), ("s2c", NOTE))
    assert outcome.untouched


def test_times_limits_the_rule() -> None:
    actor = Actor([parse_fault("~m tools/call & ~k request => drop times=1")])
    first, second = decide(actor, ("c2s", CALL), ("c2s", CALL.replace(b"7", b"8")))
    assert first.forward is None and second.untouched


def test_p_is_seeded() -> None:
    def run() -> list[bool]:
        actor = Actor([parse_fault("~k request => drop p=0.5")], seed=3)
        requests = [("c2s", CALL.replace(b"7", str(i).encode())) for i in range(40)]
        return [o.forward is None for o in decide(actor, *requests)]

    picks = run()
    assert picks == run() and 0 < sum(picks) < 40


def test_delay_and_corrupt() -> None:
    actor = Actor([parse_fault("~k request => delay 250ms"), parse_fault("~k response => corrupt")])
    request, response = decide(actor, ("c2s", CALL), ("s2c", RESULT))
    assert (request.forward, request.delay) == (CALL, 0.25)
    assert request.act is not None and request.act.ms == 250
    assert response.made == "corrupt" and response.forward is not None
    with pytest.raises(ValueError):
        json.loads(response.forward)


SCRIPT = """
from mcpeek.inspector.act import Drop, Edit, Reply

async def on_message(msg, flow):
    if msg.is_response and flow.method == "tools/call":
        body = msg.json
        body["result"]["content"] = [{"type": "text", "text": "edited"}]
        return Edit(body)
    if msg.method == "ping":
        return Reply(result={})
    if msg.method == "notifications/progress":
        return Drop()
"""


def test_a_script_edits_answers_and_drops(tmp_path: Path) -> None:
    path = tmp_path / "hooks.py"
    path.write_text(SCRIPT)
    actor = Actor(scripts=[load_script(path)])
    ping = b'{"jsonrpc":"2.0","id":"p","method":"ping"}'
    call, result, pong, note = decide(
        actor, ("c2s", CALL), ("s2c", RESULT), ("c2s", ping), ("s2c", NOTE)
    )
    assert call.untouched
    assert result.made == "edit" and b"edited" in (result.forward or b"")
    assert result.act is not None and result.act.by == "script"
    assert pong.answer == b'{"jsonrpc":"2.0","id":"p","result":{}}'
    assert note.forward is None


def test_a_script_that_raises_is_told_once_and_messages_pass(tmp_path: Path) -> None:
    path = tmp_path / "broken.py"
    path.write_text("def on_message(msg, flow):\n    raise KeyError('nope')\n")
    told: list[str] = []
    actor = Actor(scripts=[load_script(path)], report=told.append)
    outcomes = decide(actor, ("c2s", CALL), ("s2c", RESULT))
    assert all(o.untouched for o in outcomes)
    assert len(told) == 1 and "raised KeyError" in told[0]


@pytest.mark.parametrize(
    ("content", "says"),
    [
        ("def on_message(msg, flow)\n    pass\n", "syntax error at line 1"),
        ("import not_a_module_anywhere\n", "failed to load: ModuleNotFoundError"),
        ("x = 1\n", "defines no on_message"),
    ],
)
def test_bad_scripts_say_why(content: str, says: str, tmp_path: Path) -> None:
    path = tmp_path / "s.py"
    path.write_text(content)
    with pytest.raises(ScriptError) as caught:
        load_script(path)
    assert says in str(caught.value) and "\n" not in str(caught.value)


CAPTURES = Path(__file__).parents[2] / "captures"


def test_reply_recorded_answers_from_the_capture_with_the_live_id() -> None:
    capture = CAPTURES / "legacy-stdio.jsonl"
    actor = Actor([parse_fault(f"~m tools/call => reply-recorded {capture}")])
    live = (
        b'{"jsonrpc":"2.0","id":"live-9","method":"tools/call",'
        b'"params":{"name":"get_weather","arguments":{"city":"Paris"}}}'
    )
    (outcome,) = decide(actor, ("c2s", live))
    answer = json.loads(outcome.answer or b"")
    assert answer["id"] == "live-9" and outcome.forward is None
    assert "Sunny in Paris" in json.dumps(answer["result"])
    assert outcome.act is not None and outcome.act.action == "reply"
