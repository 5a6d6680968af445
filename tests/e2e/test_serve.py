"""``mcpeek serve``: the official SDK client against a mock made of a real SDK capture.

Captures are recorded once per module from the SDK's own servers through
``mcpeek stdio -w`` and ``mcpeek http -w`` (both eras); then the unmodified
SDK clients talk to ``mcpeek serve`` of those captures, on stdio and on HTTP,
and must get the same outcome as against the real server. ``--strict`` is
on: the SDK clients must not break a client rule either.
"""

from __future__ import annotations

import json
import signal
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from mcpeek import inspector
from tests.conftest import mcpeek_argv, peer_argv
from tests.e2e.recording import record_http, record_stdio
from tests.e2e.test_sdk_http import free_port, running

pytestmark = pytest.mark.e2e

ERAS = ("modern", "legacy")


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, dict[str, object]]]:
    """(capture, outcome against the real server) per transport-era, recorded once."""
    base = tmp_path_factory.mktemp("serve")
    out = {}
    for era in ERAS:
        for transport, record in (("stdio", record_stdio), ("http", record_http)):
            capture = base / f"{transport}-{era}.jsonl"
            out[f"{transport}-{era}"] = (capture, record(era, capture))
    return out


@contextmanager
def serving(*args: str) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    port = free_port()
    argv = mcpeek_argv("serve", "--listen", f"127.0.0.1:{port}", *args)
    with running(argv, "serving") as proc:
        yield f"http://127.0.0.1:{port}/mcp", proc


def stop(proc: subprocess.Popen[str]) -> tuple[int, str]:
    proc.send_signal(signal.SIGINT)
    assert proc.stderr is not None
    err = proc.stderr.read()
    return proc.wait(timeout=30), err


@pytest.mark.parametrize("era", ERAS)
def test_sdk_stdio_client_against_the_mock_on_stdio(
    era: str, recorded: dict[str, tuple[Path, dict[str, object]]], tmp_path: Path
) -> None:
    capture, expected = recorded[f"stdio-{era}"]
    session = tmp_path / "mock-session.jsonl"
    mock = mcpeek_argv("serve", "--strict", "-w", str(session), str(capture))
    err_log = tmp_path / "mock.err"
    wrapped = ["sh", "-c", f'exec "$@" 2>"{err_log}"', "sh", *mock]
    proc = subprocess.run(
        peer_argv("sdk_client.py", "--era", era, "--", *wrapped), capture_output=True, timeout=90
    )
    assert proc.returncode == 0, proc.stderr.decode()[-3000:] + err_log.read_text()
    assert json.loads(proc.stdout) == expected
    assert "Traceback" not in err_log.read_text()
    # the mock session's own capture: the same flows, answered by the mock
    flows = [f for f in inspector.load(session).flows if f.status != "notification"]
    assert [f.status for f in flows] == ["complete"] * 5
    assert [f.progress_count for f in flows if f.name == "count"] == [3]


@pytest.mark.parametrize("era", ERAS)
def test_sdk_http_client_against_the_mock_on_http(
    era: str, recorded: dict[str, tuple[Path, dict[str, object]]]
) -> None:
    capture, expected = recorded[f"http-{era}"]
    with serving("--strict", "--timing", "fast", str(capture)) as (url, proc):
        client = subprocess.run(
            peer_argv("sdk_http_client.py", "--era", era, "--url", url),
            capture_output=True,
            text=True,
            timeout=90,
        )
        code, err = stop(proc)
    assert client.returncode == 0, client.stderr[-3000:] + err[-2000:]
    outcome = json.loads(client.stdout)
    assert outcome == expected  # the MRTR (modern) or elicitation (legacy) confirm included
    assert outcome["confirm"] == "confirmed: Proceed?"
    assert code == 0, err[-2000:]
    assert "Traceback" not in err


@pytest.mark.parametrize("era", ERAS)
def test_a_stdio_capture_served_on_http(
    era: str, recorded: dict[str, tuple[Path, dict[str, object]]]
) -> None:
    capture, expected = recorded[f"stdio-{era}"]
    with serving("--timing", "fast", str(capture)) as (url, proc):
        client = subprocess.run(
            peer_argv("sdk_http_client.py", "--era", era, "--url", url, "--skip-confirm"),
            capture_output=True,
            text=True,
            timeout=90,
        )
        code, err = stop(proc)
    assert client.returncode == 0, client.stderr[-3000:] + err[-2000:]
    outcome = json.loads(client.stdout)
    assert {k: outcome[k] for k in expected} == expected
    assert code == 0


def test_a_miss_names_the_closest_recorded_request(
    recorded: dict[str, tuple[Path, dict[str, object]]],
) -> None:
    capture, _ = recorded["stdio-modern"]
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
         "params": {"name": "add", "arguments": {"a": 7, "b": 3}, "_meta": meta}},
        {"jsonrpc": "2.0", "id": 2, "method": "prompts/list", "params": {"_meta": meta}},
    ]  # fmt: skip
    proc = subprocess.run(
        mcpeek_argv("serve", "--timing", "fast", str(capture)),
        input="".join(json.dumps(line) + "\n" for line in lines),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    miss, unknown = (json.loads(line) for line in proc.stdout.splitlines())
    assert miss["id"] == 1 and miss["error"]["code"] == -32602
    assert miss["error"]["message"] == (
        "no recorded tools/call matches; closest: tools/call {name: add, arguments: {a: 2, b: 3}}"
        " — differs at /params/arguments/a: recorded 2, got 7"
    )
    assert unknown["id"] == 2 and unknown["error"]["code"] == -32601
    assert "mcpeek: no recorded tools/call matches" in proc.stderr


def test_misses_forwarded_to_a_real_stdio_server(
    recorded: dict[str, tuple[Path, dict[str, object]]],
) -> None:
    capture, _ = recorded["stdio-modern"]
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    call = {"name": "add", "arguments": {"a": 7, "b": 3}, "_meta": meta}
    recorded_call = {**call, "arguments": {"a": 2, "b": 3}}
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": recorded_call},
    ]
    proc = subprocess.run(
        mcpeek_argv("serve", "--timing", "fast", str(capture), "--", *peer_argv("sdk_server.py")),
        input="".join(json.dumps(line) + "\n" for line in lines),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    answers = {m["id"]: m for m in map(json.loads, proc.stdout.splitlines())}
    assert answers[1]["result"]["structuredContent"] == {"result": 10}  # the real server's
    assert answers[2]["result"]["structuredContent"] == {"result": 5}  # the capture's
    assert "mcpeek: forwarded: no recorded tools/call matches" in proc.stderr


def test_mrtr_chain_replayed_on_stdio(
    recorded: dict[str, tuple[Path, dict[str, object]]],
) -> None:
    """The SDK's modern HTTP capture (confirm: input_required → retry) served on stdio:
    the first call gets the recorded input_required, the retry that echoes the
    issued requestState gets the recorded result, and --strict finds nothing."""
    capture, _ = recorded["http-modern"]
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
    }
    call = {"name": "confirm", "arguments": {"question": "Proceed?"}, "_meta": meta}
    proc = subprocess.Popen(
        mcpeek_argv("serve", "--strict", "--timing", "fast", str(capture)),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(
            json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call}) + "\n"
        )
        proc.stdin.flush()
        first = json.loads(proc.stdout.readline())["result"]
        assert first["resultType"] == "input_required"
        answers = {
            key: {"action": "accept", "content": {"confirm": True}}
            for key in first["inputRequests"]
        }
        retry = {**call, "inputResponses": answers, "requestState": first["requestState"]}
        proc.stdin.write(
            json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": retry}) + "\n"
        )
        proc.stdin.flush()
        final = json.loads(proc.stdout.readline())
        proc.stdin.close()
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert final["id"] == 2
    assert final["result"]["structuredContent"] == {"result": "confirmed: Proceed?"}
    assert proc.stderr is not None and "ERROR" not in proc.stderr.read()


def test_strict_lists_what_a_misbehaving_client_did(
    recorded: dict[str, tuple[Path, dict[str, object]]],
) -> None:
    capture, _ = recorded["http-modern"]
    proc = subprocess.run(
        peer_argv("misbehaving_client.py", "--", *mcpeek_argv("serve", "--strict", str(capture))),
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout)
    assert report["returncode"] == 1
    assert report["answers"]["3"][0]["resultType"] == "input_required"
    err = proc.stderr
    assert "mcpeek: ERROR id.reused tools/call id 2" in err
    assert "mcpeek: ERROR mrtr.request-state-modified tools/call id 4" in err
    summary = err[err.index("--strict") :]
    assert "id.reused" in summary and "mrtr.request-state-modified" in summary
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["missing.jsonl"], "no such file"),
        (["{client_only}"], "no server side"),
        (["{capture}", "--ignore", "params/x"], "--ignore"),
        (["{capture}", "--listen", "nope"], "--listen"),
        (["{capture}", "--listen", "10.1.2.3:0"], "not a loopback address"),
        (["{capture}", "--on-miss", "forward"], "needs a server"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args: list[str], expected: str, tmp_path: Path) -> None:
    from mcpeek.inspector.testing.records import RecordBuilder

    b = RecordBuilder()
    b.request("tools/list", id=1)
    client_only = b.save(tmp_path / "client-only.jsonl")
    b.result(1, {"tools": []})
    capture = b.save(tmp_path / "ok.jsonl")
    argv = [a.format(client_only=client_only, capture=capture) for a in args]
    proc = subprocess.run(
        mcpeek_argv("serve", *argv), capture_output=True, text=True, timeout=30, cwd=tmp_path
    )
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("mcpeek: ")
    assert expected in proc.stderr


def test_the_python_api_serves_http_in_a_thread(
    recorded: dict[str, tuple[Path, dict[str, object]]],
) -> None:
    from mcpeek.inspector.replay import MockServer, start_http

    capture, expected = recorded["http-modern"]
    server = MockServer.from_capture(capture, timing="fast")
    with start_http(server) as mock:
        client = subprocess.run(
            peer_argv("sdk_http_client.py", "--era", "modern", "--url", mock.url),
            capture_output=True,
            text=True,
            timeout=90,
        )
    assert client.returncode == 0, client.stderr[-3000:]
    assert json.loads(client.stdout) == expected
    assert mock.session_misses == []
