"""Holding messages for a person (``--intercept``), released through the control socket.

The real SDK client calls ``add(2, 3)``; mcpeek holds the request, and the
test, playing the person, looks at it through ``CAPTURE.ctl``, is refused an
edit that is not JSON, then releases it edited, dropped or answered.
"""

from __future__ import annotations

import json
import stat
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from mcpeek import inspector
from mcpeek.inspector.act.control import control_path, control_request
from mcpeek.inspector.records import Act, Msg, wire_bytes
from tests.conftest import mcpeek_argv, peer_argv
from tests.e2e.test_act import ADD_REQUEST
from tests.e2e.test_sdk_http import free_port, running
from tests.e2e.test_sdk_stdio import tee_argv

pytestmark = pytest.mark.e2e


@contextmanager
def held_client(
    transport: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[subprocess.Popen[bytes], Path]]:
    log = tmp_path / "tools.log"
    log.touch()
    monkeypatch.setenv("MCPEEK_TEST_TOOL_LOG", str(log))
    capture = tmp_path / "held.jsonl"
    client = peer_argv("act_client.py", "--era", "modern", "--timeout", "30")
    actions = ["-w", str(capture), "--intercept", ADD_REQUEST]
    if transport == "stdio":
        proxy = mcpeek_argv("stdio", *actions, "--", *peer_argv("sdk_server.py"))
        with subprocess.Popen([*client, "--", *proxy], stdout=subprocess.PIPE) as proc:
            yield proc, capture
        return
    upstream, listen = free_port(), free_port()
    server = peer_argv("sdk_http_server.py", "--port", str(upstream))
    proxy = mcpeek_argv(
        "http", "--no-tui", "--upstream", f"http://127.0.0.1:{upstream}/mcp",
        "--listen", f"127.0.0.1:{listen}", *actions,
    )  # fmt: skip
    with running(server, "listening on"), running(proxy, "proxying"):
        url = f"http://127.0.0.1:{listen}/mcp"
        with subprocess.Popen([*client, "--url", url], stdout=subprocess.PIPE) as proc:
            yield proc, capture


def wait_held(capture: Path) -> dict[str, Any]:
    """The one held message, once mcpeek holds it (polled: an event, not a timer)."""
    path = control_path(capture)
    for _ in range(600):
        if path.exists():
            held = control_request(path, {"op": "list"})["held"]
            if held:
                (one,) = held
                return one
        time.sleep(0.05)
    raise AssertionError("nothing was held")


def finish(proc: subprocess.Popen[bytes]) -> dict[str, Any]:
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0
    return json.loads(out)


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_a_held_request_is_edited_after_an_invalid_edit_is_refused(
    transport: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with held_client(transport, tmp_path, monkeypatch) as (proc, capture):
        held = wait_held(capture)
        assert held["method"] == "tools/call" and held["dir"] == "c2s"
        ctl = control_path(capture)
        assert stat.S_IMODE(ctl.stat().st_mode) == 0o600  # private to the user
        refused = control_request(ctl, {"op": "edit", "id": held["id"], "raw": '{"jsonrpc":'})
        assert refused["ok"] is False and "not valid JSON" in refused["error"]
        assert "column 12" in refused["error"]  # where it stops being JSON
        edited = held["raw"].replace('"a":2', '"a":40')
        assert control_request(ctl, {"op": "edit", "id": held["id"], "raw": edited})["ok"]
        outcome = finish(proc)
    assert outcome["add"]["text"] == "43"  # the server computed the edited call
    records = inspector.load(capture).records
    (act,) = [r for r in records if isinstance(r, Act)]
    assert act.action == "edit" and act.by == "intercept" and act.ms is not None
    assert '"a":2' in (act.raw or "")
    (made,) = [r for r in records if isinstance(r, Msg) and r.made == "edit"]
    assert b'"a":40' in wire_bytes(made)


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_a_held_request_is_answered_in_place(
    transport: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    answer = {
        "result": {
            "content": [{"type": "text", "text": "7"}],
            "structuredContent": {"result": 7},
            "resultType": "complete",
        }
    }
    with held_client(transport, tmp_path, monkeypatch) as (proc, capture):
        held = wait_held(capture)
        ctl = control_path(capture)
        reply = {"op": "answer", "id": held["id"], "raw": json.dumps(answer)}
        assert control_request(ctl, reply)["ok"]
        outcome = finish(proc)
    assert outcome["add"]["text"] == "7"
    assert (tmp_path / "tools.log").read_text().split() == ["get_weather"]  # never saw add
    assert not control_path(capture).exists()  # the socket goes with the proxy


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_an_injected_list_changed_makes_the_sdk_client_list_tools_again(
    era: str, tmp_path: Path
) -> None:
    capture = tmp_path / "inject.jsonl"
    client = peer_argv("act_client.py", "--era", era, "--await-list-changed", "30")
    proxy = mcpeek_argv("stdio", "-w", str(capture), "--control", "--", *peer_argv("sdk_server.py"))
    with subprocess.Popen([*client, "--", *proxy], stdout=subprocess.PIPE) as proc:
        ctl = control_path(capture)
        for _ in range(600):  # until the client has listed the tools once (an event)
            recorded = capture.read_bytes() if capture.exists() else b""
            if ctl.exists() and b'\\"tools\\":[' in recorded:  # escaped inside "raw"
                break
            time.sleep(0.05)
        ping = control_request(
            ctl, {"op": "inject", "to": "server", "raw": '{"jsonrpc":"2.0","id":1,"method":"ping"}'}
        )
        assert ping == {"ok": True, "id": "mcpeek-1"}  # mcpeek's own id, whatever was written
        note = '{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}'
        assert control_request(ctl, {"op": "inject", "to": "client", "raw": note})["ok"]
        outcome = finish(proc)
    assert outcome["relisted"] == 3  # the SDK client listed the tools again
    records = inspector.load(capture).records
    lists = [r for r in records if isinstance(r, Msg) and b'"tools/list"' in wire_bytes(r)]
    assert len(lists) == 2
    acts = [r for r in records if isinstance(r, Act)]
    actions = [a.action for a in acts]  # the pong may come before or after the second inject
    assert sorted(actions) == ["consume", "inject", "inject"] and actions[0] == "inject"
    (consumed,) = [a for a in acts if a.action == "consume"]
    assert consumed.dir == "s2c" and '"mcpeek-1"' in (consumed.raw or "")
    # The server's answer to mcpeek's ping went to mcpeek, never to the client.
    to_client = [wire_bytes(r) for r in records if isinstance(r, Msg) and r.dir == "s2c"]
    assert not any(b'"mcpeek-1"' in data for data in to_client)
    made = [r for r in records if isinstance(r, Msg) and r.made == "inject"]
    assert [m.dir for m in made] == ["c2s", "s2c"]


def test_a_held_stdio_message_holds_the_later_ones_until_released_in_order(
    tmp_path: Path,
) -> None:
    capture = tmp_path / "order.jsonl"
    server = tee_argv(tmp_path, "server", *peer_argv("sdk_server.py"))
    proxy = mcpeek_argv(
        "stdio", "-w", str(capture), "--intercept", "~m tools/call & ~k notification", "--", *server
    )
    client = tee_argv(tmp_path, "client", *proxy)
    argv = peer_argv("sdk_client.py", "--era", "legacy", "--", *client)
    with subprocess.Popen(argv, stdout=subprocess.PIPE) as proc:
        first = wait_held(capture)
        assert b"step 1/3" in first["raw"].encode()
        server_out, client_out = tmp_path / "server.out", tmp_path / "client.out"
        for _ in range(600):  # the server has answered count(3) (an event, polled)
            if b"counted 3" in server_out.read_bytes():
                break
            time.sleep(0.05)
        # ... yet the client has none of it: all of it waits behind the held notification.
        assert b"step 1/3" not in client_out.read_bytes()
        assert b"counted 3" not in client_out.read_bytes()
        steps = [first["raw"]]
        control_request(control_path(capture), {"op": "forward", "id": first["id"]})
        for _ in range(2):  # the next two progress notifications are held in turn
            held = wait_held(capture)
            steps.append(held["raw"])
            control_request(control_path(capture), {"op": "forward", "id": held["id"]})
        outcome = finish(proc)
    assert outcome["progress"] == 3
    assert all(f"step {n}/3" in step for n, step in enumerate(steps, 1))  # in their order
    assert client_out.read_bytes() == server_out.read_bytes()  # released in order, whole
