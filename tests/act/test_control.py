"""The control channel's answers, line by line (no socket needed for these)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from mcpeek.inspector.act.control import ControlServer
from mcpeek.inspector.act.hold import Holds
from mcpeek.inspector.act.inject import Injector

CALL = b'{"jsonrpc":"2.0","id":"c1","method":"tools/call"}'


def ask(server: ControlServer, request: object) -> dict[str, object]:
    return server.answer(json.dumps(request).encode())


def test_requests_that_cannot_be_done_say_why() -> None:
    async def run() -> None:
        holds = Holds()
        server = ControlServer(Path("unused.ctl"), holds, Injector())
        assert server.answer(b"not json")["ok"] is False
        assert "a JSON object" in str(ask(server, [1])["error"])
        assert "no message #9 is held" in str(ask(server, {"op": "forward", "id": 9})["error"])
        held = holds.hold("s2c", "stdio", b'{"jsonrpc":"2.0","method":"x"}', "notification", "x")
        refused = ask(server, {"op": "answer", "id": held.number, "raw": '{"result":{}}'})
        assert "only a request is answered" in str(refused["error"])
        unknown = ask(server, {"op": "explode", "id": held.number})
        assert "unknown release 'explode'" in str(unknown["error"])
        injected = ask(server, {"op": "inject", "to": "server", "raw": "{}"})
        assert "cannot inject" in str(injected["error"])  # no relay that injects
        assert not held.future.done()  # nothing refused released it

    asyncio.run(run())


def test_an_answer_keeps_the_request_id_as_written() -> None:
    async def run() -> bytes | None:
        holds = Holds()
        server = ControlServer(Path("unused.ctl"), holds)
        held = holds.hold("c2s", "stdio", CALL, "request", "tools/call")
        reply = {"op": "answer", "id": held.number, "raw": '{"error":{"code":1,"message":"no"}}'}
        assert ask(server, reply) == {"ok": True}
        return (await held.future).data

    assert asyncio.run(run()) == b'{"jsonrpc":"2.0","id":"c1","error":{"code":1,"message":"no"}}'
