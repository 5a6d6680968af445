"""Acting on traffic with the real SDK client and server, stdio and HTTP, both eras.

Each test runs ``tests/peers/act_client.py`` (``add(2, 3)`` then
``get_weather("Paris")``, each with a short timeout) through ``mcpeek stdio``
or ``mcpeek http`` with a fault rule or a script, and checks what the SDK
client got, what the server's own log says it saw (``MCPEEK_TEST_TOOL_LOG``)
and what the capture recorded (``act`` records, ``made`` messages).
"""

from __future__ import annotations

import json
import signal
import subprocess
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from mcpeek import inspector
from mcpeek.inspector.records import Act, Http, Msg, wire_bytes
from tests.conftest import mcpeek_argv, peer_argv
from tests.e2e.test_sdk_http import free_port, running
from tests.e2e.test_sdk_stdio import tee_argv

pytestmark = pytest.mark.e2e

WEATHER_RESPONSE = "~m tools/call & ~k response & ~b Paris"
ADD_REQUEST = '~m tools/call & ~k request & ~b "\\"a\\""'
ERAS = ["modern", "legacy"]
TRANSPORTS = ["stdio", "http"]
EDIT_SCRIPT = """
from mcpeek.inspector.act import Edit

def on_message(msg, flow):
    if msg.is_response and flow.method == "tools/call" and "Sunny" in msg.raw.decode():
        return Edit(msg.raw.replace(b"Sunny", b"Rainy"))
"""


@dataclass
class Run:
    outcome: dict[str, Any]  # what the SDK client reported
    tools_seen: list[str]  # the server's own log of the tools it ran
    records: list[Any]
    stderr: str


@contextmanager
def _http_proxy(tmp_path: Path, capture: Path, actions: list[str]) -> Iterator[str]:
    upstream, listen = free_port(), free_port()
    server = peer_argv("sdk_http_server.py", "--port", str(upstream))
    proxy_argv = mcpeek_argv(
        "http",
        "--no-tui",
        "--upstream",
        f"http://127.0.0.1:{upstream}/mcp",
        "--listen",
        f"127.0.0.1:{listen}",
        "-w",
        str(capture),
        *actions,
    )
    with running(server, "listening on"), running(proxy_argv, "proxying") as proxy:
        yield f"http://127.0.0.1:{listen}/mcp"
        proxy.send_signal(signal.SIGINT)
        assert proxy.wait(timeout=30) == 0


def act_run(
    transport: str,
    era: str,
    tmp_path: Path,
    actions: list[str],
    *,
    timeout: float = 10.0,
    monkeypatch: pytest.MonkeyPatch,
    client_survives: bool = True,
) -> Run:
    log = tmp_path / "tools.log"
    log.touch()
    monkeypatch.setenv("MCPEEK_TEST_TOOL_LOG", str(log))
    capture = tmp_path / "act.jsonl"
    client = peer_argv("act_client.py", "--era", era, "--timeout", str(timeout))
    if transport == "stdio":
        server = peer_argv("sdk_server.py")
        proxy = mcpeek_argv("stdio", "-w", str(capture), *actions, "--", *server)
        stderr_log = tmp_path / "mcpeek.err"
        wrapped = ["sh", "-c", f'exec "$@" 2>"{stderr_log}"', "sh", *proxy]
        proc = subprocess.run([*client, "--", *wrapped], capture_output=True, timeout=120)
        stderr = stderr_log.read_text() if stderr_log.exists() else ""
    else:
        with _http_proxy(tmp_path, capture, actions) as url:
            proc = subprocess.run([*client, "--url", url], capture_output=True, timeout=120)
        stderr = ""
    if client_survives:
        assert proc.returncode == 0, proc.stderr.decode()[-3000:]
    loaded = inspector.load(capture)
    assert loaded.problems == []
    exchanges = [r for r in loaded.records if isinstance(r, Http)]
    ends = Counter(r.x for r in exchanges if r.phase == "end")
    # Every exchange, acted on or not, was closed once.
    assert set(ends) == {r.x for r in exchanges if r.phase == "request"}
    assert set(ends.values()) <= {1}
    outcome = json.loads(proc.stdout) if proc.returncode == 0 else {"failed": proc.stderr.decode()}
    return Run(outcome, log.read_text().split(), loaded.records, stderr)


def lint_findings(capture: Path) -> list[dict[str, Any]]:
    proc = subprocess.run(
        mcpeek_argv("lint", "--format", "json", str(capture)),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stdout  # findings on what mcpeek did never fail lint
    return [json.loads(line) for line in proc.stdout.splitlines()]


def acts(run: Run) -> list[Act]:
    return [r for r in run.records if isinstance(r, Act)]


def made(run: Run, kind: str) -> list[Msg]:
    return [r for r in run.records if isinstance(r, Msg) and r.made == kind]


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_script_edits_a_result_and_the_capture_holds_both(
    transport: str, era: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = tmp_path / "rain.py"
    script.write_text(EDIT_SCRIPT)
    run = act_run(transport, era, tmp_path, ["-s", str(script)], monkeypatch=monkeypatch)
    assert run.outcome["weather"]["text"] == "Rainy in Paris"
    assert run.outcome["add"]["text"] == "5"  # the rest passes untouched
    (act,) = acts(run)
    assert act.action == "edit" and act.by == "script" and act.dir == "s2c"
    assert "Sunny in Paris" in (act.raw or "")  # what the server sent
    (edited,) = made(run, "edit")
    assert "Rainy in Paris" in wire_bytes(edited).decode()  # what the client received
    assert run.tools_seen == ["add", "get_weather"]


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_dropped_response_makes_the_client_time_out(
    transport: str, era: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rule = f"{WEATHER_RESPONSE} => drop"
    run = act_run(transport, era, tmp_path, ["--fault", rule], timeout=2.0, monkeypatch=monkeypatch)
    assert run.outcome["add"]["text"] == "5"
    assert run.outcome["weather"]["timeout"] is True, run.outcome
    assert run.tools_seen == ["add", "get_weather"]  # the server did answer
    (act,) = acts(run)
    assert act.action == "drop" and "Sunny in Paris" in (act.raw or "")
    delivered = [wire_bytes(r) for r in run.records if isinstance(r, Msg) and r.dir == "s2c"]
    assert not any(b"Sunny in Paris" in data for data in delivered)
    # The client's request went unanswered because of mcpeek, not of the server.
    assert all(f.get("made") == "drop" for f in lint_findings(tmp_path / "act.jsonl"))


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("transport", TRANSPORTS)
def test_an_error_fault_is_answered_in_place_and_the_server_never_sees_it(
    transport: str, era: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rule = f'{ADD_REQUEST} => error -32603 "injected failure"'
    run = act_run(transport, era, tmp_path, ["--fault", rule], monkeypatch=monkeypatch)
    assert run.outcome["add"]["error"] == [-32603, "injected failure"]
    assert run.outcome["weather"]["text"] == "Sunny in Paris"
    assert run.tools_seen == ["get_weather"]  # the server's log: add never reached it
    (act,) = acts(run)
    assert act.action == "reply" and act.dir == "c2s"
    (answer,) = made(run, "reply")
    assert json.loads(wire_bytes(answer))["error"]["code"] == -32603
    if transport == "http":  # the exchange is mcpeek's own: no server answered it
        answered = [r for r in run.records if isinstance(r, Http) and r.by_proxy]
        assert [r.x for r in answered] == [answer.ch]


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("transport", TRANSPORTS)
def test_reply_from_a_file_answers_in_place(
    transport: str, era: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    result: dict[str, Any] = {
        "content": [{"type": "text", "text": "42"}],
        "structuredContent": {"result": 42},  # add declares an output schema
        "isError": False,
    }
    if era == "modern":
        result["resultType"] = "complete"  # 2026-07-28 results say what they are
    answer = {"result": result}
    (tmp_path / "answer.json").write_text(json.dumps(answer))
    rule = f"{ADD_REQUEST} => reply @{tmp_path / 'answer.json'}"
    run = act_run(transport, era, tmp_path, ["--fault", rule], monkeypatch=monkeypatch)
    assert run.outcome["add"]["text"] == "42"
    assert run.tools_seen == ["get_weather"]


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("transport", TRANSPORTS)
def test_delay_adds_the_delay(
    transport: str, era: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rule = f"{WEATHER_RESPONSE} => delay 1500ms times=1"
    run = act_run(transport, era, tmp_path, ["--fault", rule], monkeypatch=monkeypatch)
    assert run.outcome["weather"]["text"] == "Sunny in Paris"
    # Measured: at least the delay (a lower bound holds on any machine, however loaded).
    assert run.outcome["weather"]["seconds"] >= 1.5
    (act,) = acts(run)
    assert act.action == "delay" and act.ms == 1500


@pytest.mark.parametrize("era", ERAS)
def test_a_held_stdio_message_holds_the_later_ones_of_its_direction(
    era: str, tmp_path: Path, capture_path: Path
) -> None:
    # The first progress notification of count(3) is held a second; the server's
    # next two progress notifications and its result come right after it.
    rule = '~k notification & ~b "step 1/3" => delay 1s times=1'
    server = tee_argv(tmp_path, "server", *peer_argv("sdk_server.py"))
    proxy = mcpeek_argv("stdio", "-w", str(capture_path), "--fault", rule, "--", *server)
    client = tee_argv(tmp_path, "client", *proxy)
    proc = subprocess.run(
        peer_argv("sdk_client.py", "--era", era, "--", *client), capture_output=True, timeout=90
    )
    assert proc.returncode == 0, proc.stderr.decode()[-3000:]
    assert json.loads(proc.stdout)["progress"] == 3
    # Released in order: the client read exactly what the server wrote, in its order.
    server_wrote = (tmp_path / "server.out").read_bytes()
    assert (tmp_path / "client.out").read_bytes() == server_wrote
    records = inspector.load(capture_path).records
    (act,) = [r for r in records if isinstance(r, Act)]
    assert act.action == "delay" and "step 1/3" in (act.raw or "")
    s2c = [r for r in records if isinstance(r, Msg) and r.dir == "s2c"]
    assert b"".join(wire_bytes(r) + b"\n" for r in s2c) == server_wrote
    # The count result matched no rule, yet reached the client only after the held
    # notification: at least the delay after its request (measured, a lower bound).
    count_call = next(
        r for r in records if isinstance(r, Msg) and r.dir == "c2s" and b'"count"' in wire_bytes(r)
    )
    count_result = next(r for r in s2c if b"counted 3" in wire_bytes(r))
    assert count_result.t - count_call.t >= 1.0


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_corrupt_sends_invalid_json_and_the_finding_is_not_the_servers(
    transport: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rule = f"{WEATHER_RESPONSE} => corrupt"
    run = act_run(
        transport, "legacy", tmp_path, ["--fault", rule], timeout=2.0, monkeypatch=monkeypatch
    )
    assert run.outcome["add"]["text"] == "5"
    assert run.outcome["weather"]["text"] is None  # the client got no usable answer
    (corrupted,) = made(run, "corrupt")
    with pytest.raises(ValueError):
        json.loads(wire_bytes(corrupted))
    findings = lint_findings(tmp_path / "act.jsonl")
    # Whatever the rules find about it (a line that is not JSON, a request left
    # without a readable answer), it is mcpeek's doing, never the server's.
    assert findings and all(f.get("made") == "corrupt" for f in findings), findings


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_disconnect_cuts_the_client_off(
    transport: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rule = f"{ADD_REQUEST} => disconnect"
    run = act_run(
        transport,
        "legacy",
        tmp_path,
        ["--fault", rule],
        timeout=5.0,
        monkeypatch=monkeypatch,
        client_survives=False,  # the SDK client may give up on the session: that is the test
    )
    if "failed" in run.outcome:  # the SDK's HTTP client does not survive a cut connection
        assert "disconnect" in run.outcome["failed"].lower() or "closed" in run.outcome["failed"]
    else:
        assert run.outcome["add"]["text"] is None and run.outcome["add"]["error"] is not None
    assert "add" not in run.tools_seen
    (act,) = acts(run)
    assert act.action == "disconnect"
    if transport == "http":
        ends = [r for r in run.records if isinstance(r, Http) and r.reason == "disconnected"]
        assert len(ends) == 1
