"""Injecting over Streamable HTTP, and answering a server's request in place there.

The real SDK client and server talk through ``mcpeek http --control``; the
test, playing the person, injects through ``CAPTURE.ctl``: a
``notifications/tools/list_changed`` spliced into the stream the client has
open (the legacy GET stream, the 2026-07-28 ``subscriptions/listen`` stream)
makes the client list its tools again, and a ``ping`` mcpeek POSTs to the
server is answered to mcpeek alone.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from mcpeek import inspector
from mcpeek.inspector.act.control import control_path, control_request
from mcpeek.inspector.records import Act, Http, Msg, wire_bytes
from tests.conftest import mcpeek_argv, peer_argv
from tests.e2e.test_act_hold import finish
from tests.e2e.test_sdk_http import free_port, running

pytestmark = pytest.mark.e2e

PING = '{"jsonrpc":"2.0","id":1,"method":"ping"}'
#: What the era's server answers: 2026-07-28 has no ping, so mcpeek asks for the tools.
ASK = {"legacy": (PING, {}), "modern": ('{"jsonrpc":"2.0","id":7,"method":"tools/list"}', None)}
LIST_CHANGED = '{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}'


@contextmanager
def proxied(capture: Path, *actions: str) -> Iterator[str]:
    """The SDK's HTTP server behind ``mcpeek http --control``: the URL to connect to."""
    upstream, listen = free_port(), free_port()
    server = peer_argv("sdk_http_server.py", "--port", str(upstream))
    proxy = mcpeek_argv(
        "http", "--no-tui", "--upstream", f"http://127.0.0.1:{upstream}/mcp",
        "--listen", f"127.0.0.1:{listen}", "-w", str(capture), "--control", *actions,
    )  # fmt: skip
    with running(server, "listening on"), running(proxy, "proxying"):
        yield f"http://127.0.0.1:{listen}/mcp"


def inject(capture: Path, to: str, raw: str) -> dict[str, Any]:
    return control_request(control_path(capture), {"op": "inject", "to": to, "raw": raw})


def inject_when_carried(capture: Path, raw: str) -> list[str]:
    """Inject ``raw`` to the client once a stream can carry it (polled: the client
    opens its stream when it is ready); the refusals seen before."""
    refusals: list[str] = []
    for _ in range(600):
        answer = inject(capture, "client", raw)
        if answer["ok"]:
            return refusals
        refusals.append(answer["error"])
        time.sleep(0.05)
    raise AssertionError(f"never carried: {refusals[-1:]}")


def wait_recorded(capture: Path, needle: bytes) -> None:
    """Until the capture holds ``needle`` (polled: an event, not a timer)."""
    for _ in range(600):
        if capture.exists() and needle in capture.read_bytes():
            return
        time.sleep(0.05)
    raise AssertionError(f"never recorded: {needle!r}")


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_an_injected_list_changed_makes_the_sdk_http_client_list_tools_again(
    era: str, tmp_path: Path
) -> None:
    capture = tmp_path / "inject.jsonl"
    with proxied(capture) as url:
        client = peer_argv("act_client.py", "--era", era, "--await-list-changed", "30")
        with subprocess.Popen([*client, "--url", url], stdout=subprocess.PIPE) as proc:
            wait_recorded(capture, b'\\"tools\\":[')  # the client listed them once
            asked = inject(capture, "server", ASK[era][0])
            assert asked == {"ok": True, "id": "mcpeek-1"}  # mcpeek's own id
            wait_recorded(capture, b'"action":"consume"')  # before the client may go
            refusals = inject_when_carried(capture, LIST_CHANGED)
            outcome = finish(proc)
    assert outcome["relisted"] == 4  # listed again: add, count, get_weather, confirm
    assert all("no stream to the client is open" in text for text in refusals)
    records = inspector.load(capture).records
    msgs = [r for r in records if isinstance(r, Msg) and r.made is None]
    lists = [r for r in msgs if b'"tools/list"' in wire_bytes(r)]
    assert len(lists) == 2
    made = [r for r in records if isinstance(r, Msg) and r.made == "inject"]
    assert [m.dir for m in made] == ["c2s", "s2c"]
    carrier = next(r for r in records if isinstance(r, Http) and r.x == made[1].ch)
    if era == "legacy":  # the SDK's standalone GET stream
        assert carrier.method == "GET"
    else:  # the one stream a 2026-07-28 server sends change notifications on
        (listen,) = [
            r for r in records if isinstance(r, Msg) and r.ch == carrier.x and r.dir == "c2s"
        ]
        assert b'"subscriptions/listen"' in wire_bytes(listen)
    acts = [r for r in records if isinstance(r, Act)]
    assert [a.action for a in acts] == ["inject", "consume", "inject"]
    consumed = acts[1]
    assert consumed.dir == "s2c" and '"mcpeek-1"' in (consumed.raw or "")
    result = json.loads(consumed.raw or "")["result"]  # the server took mcpeek's request
    assert result == {} if era == "legacy" else len(result["tools"]) == 4
    assert consumed.ch == made[0].ch  # on mcpeek's own exchange
    # The server's answer to mcpeek's ping went to mcpeek, never to the client.
    to_client = [wire_bytes(r) for r in records if isinstance(r, Msg) and r.dir == "s2c"]
    assert not any(b'"mcpeek-1"' in data for data in to_client)
    (head,) = [r for r in records if isinstance(r, Http) and r.x == made[0].ch and r.method]
    sent = {name.lower(): value for name, value in head.headers or []}
    if era == "legacy":  # the client's session, as the client last sent it
        assert "mcp-session-id" in sent and sent["mcp-protocol-version"] == "2025-11-25"
    else:  # the request metadata a 2026-07-28 POST needs
        assert sent["mcp-method"] == "tools/list" and sent["mcp-protocol-version"] == "2026-07-28"
        assert b"io.modelcontextprotocol/clientCapabilities" in wire_bytes(made[0])  # envelope


def test_an_injection_nothing_can_carry_is_refused_with_a_clear_error(tmp_path: Path) -> None:
    capture = tmp_path / "alone.jsonl"
    with proxied(capture):
        to_client = inject(capture, "client", LIST_CHANGED)
        to_server = inject(capture, "server", PING)
    assert to_client["ok"] is False and "no stream to the client is open" in to_client["error"]
    assert to_server["ok"] is False and "the client has not POSTed yet" in to_server["error"]
    records = inspector.load(capture).records
    assert not [r for r in records if isinstance(r, (Act, Msg))]  # nothing was sent


def test_a_servers_elicitation_is_answered_in_place_over_http(tmp_path: Path) -> None:
    answer = tmp_path / "answer.json"
    answer.write_text(json.dumps({"result": {"action": "accept", "content": {"confirm": True}}}))
    capture = tmp_path / "elicit.jsonl"
    with proxied(capture, "--fault", f"~m elicitation/create => reply @{answer}") as url:
        client = peer_argv(
            "sdk_http_client.py", "--era", "legacy", "--elicitations", "0", "--url", url
        )
        done = subprocess.run(client, capture_output=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    outcome = json.loads(done.stdout)
    assert outcome["confirm"] == "confirmed: Proceed?"  # the server took mcpeek's answer
    assert outcome["elicitations"] == []  # the client was never asked
    records = inspector.load(capture).records
    (act,) = [r for r in records if isinstance(r, Act)]
    assert act.action == "reply" and act.dir == "s2c" and "elicitation/create" in (act.raw or "")
    (made,) = [r for r in records if isinstance(r, Msg) and r.made == "reply"]
    assert made.dir == "c2s" and b'"confirm":true' in wire_bytes(made)
    # The server's request is recorded after the act, as on stdio, and the answer
    # matches it (no finding blames anyone for a response to nothing).
    asked = records[records.index(act) + 1]
    assert isinstance(asked, Msg) and b"elicitation/create" in wire_bytes(asked)
    assert asked.seq < made.seq
    linted = subprocess.run(
        mcpeek_argv("lint", str(capture)), capture_output=True, text=True, check=False
    )
    assert "response.unknown-id" not in linted.stdout, linted.stdout


def test_the_http_clients_answer_to_an_injected_request_is_consumed(tmp_path: Path) -> None:
    """A ``ping`` to the legacy SDK client on its GET stream: the client POSTs its
    answer to the proxy, which keeps it (``202``, as a server would)."""
    capture = tmp_path / "client-ping.jsonl"
    with proxied(capture) as url:
        client = peer_argv("act_client.py", "--era", "legacy", "--await-list-changed", "30")
        with subprocess.Popen([*client, "--url", url], stdout=subprocess.PIPE) as proc:
            inject_when_carried(capture, PING)
            for _ in range(600):  # until the client's answer came back (an event)
                if b'"action":"consume"' in capture.read_bytes():
                    break
                time.sleep(0.05)
            assert inject(capture, "client", LIST_CHANGED)["ok"]  # lets the client finish
            assert finish(proc)["relisted"] == 4
    records = inspector.load(capture).records
    (consumed,) = [r for r in records if isinstance(r, Act) and r.action == "consume"]
    assert consumed.dir == "c2s" and json.loads(consumed.raw or "") == {
        "jsonrpc": "2.0",
        "id": "mcpeek-1",
        "result": {},
    }
    answered = [r for r in records if isinstance(r, Http) and r.x == consumed.ch]
    assert [(r.phase, r.status, r.by_proxy) for r in answered if r.phase == "response"] == [
        ("response", 202, True)
    ]
    # The client's answer to mcpeek's ping never reached the server.
    to_server = [wire_bytes(r) for r in records if isinstance(r, Msg) and r.dir == "c2s"]
    assert not any(b'"mcpeek-1"' in data and b'"result"' in data for data in to_server)
