"""``mcpeek serve`` at its edges: half-closed clients, big or pretty answers, strays,
HTTP errors from a forward target, malformed HTTP bodies, stopping with open streams.

Each test is a regression test for a defect found in review; the captures are
built here with RecordBuilder.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from mcpeek.inspector.capture import read_records
from mcpeek.inspector.records import Event
from mcpeek.inspector.testing.records import RecordBuilder, modern_meta
from tests.conftest import mcpeek_argv
from tests.e2e.test_sdk_http import free_port

#: A guard against a hang, shorter than the client's 60 s read: a mock that waited for
#: its open stream to end instead of stopping fails here (not a speed bound).
HANG_GUARD = 30


def call(msg_id: int, name: str, **arguments: object) -> str:
    params = {"name": name, "arguments": arguments, "_meta": modern_meta()}
    return json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": "tools/call", "params": params})


def serve(
    capture: Path, stdin: str, *args: str, timeout: float = 60
) -> subprocess.CompletedProcess[bytes]:
    """The client writes ``stdin`` and closes it at once (as subprocess.run and pipes do)."""
    return subprocess.run(
        mcpeek_argv("serve", str(capture), "-q", *args),
        input=stdin.encode(),
        capture_output=True,
        timeout=timeout,
    )


def capture_of(tmp_path: Path, build: RecordBuilder) -> Path:
    return build.save(tmp_path / "cap.jsonl")


def test_a_big_answer_reaches_a_client_that_closed_stdin(tmp_path: Path) -> None:
    b = RecordBuilder(modern=True)
    b.request("tools/call", {"name": "big", "arguments": {}}, id=1)
    b.result(1, {"content": [{"type": "text", "text": "x" * 2_000_000}]})
    proc = serve(capture_of(tmp_path, b), call(1, "big") + "\n", "--timing", "fast")
    assert proc.returncode == 0, proc.stderr
    (line,) = proc.stdout.splitlines()
    assert len(json.loads(line)["result"]["content"][0]["text"]) == 2_000_000


def test_an_answer_recorded_late_still_comes_after_stdin_closed(tmp_path: Path) -> None:
    b = RecordBuilder(modern=True)
    b.request("tools/call", {"name": "slow", "arguments": {}}, id=1)
    b.wait(2.5)  # longer than the mock's grace after EOF
    b.result(1, {"content": []})
    tape = tmp_path / "tape.jsonl"
    proc = serve(
        capture_of(tmp_path, b), call(1, "slow") + "\n", "-w", str(tape)
    )  # recorded timing
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["id"] == 1
    # The mock's own tape: the client's EOF came first, the answer after it (not lost).
    _, records, _ = read_records(tape)
    order = [r.event if isinstance(r, Event) else r.dir for r in records]
    assert order.index("client-eof") < order.index("s2c"), order


def test_a_pretty_printed_http_body_is_one_line_on_stdio(tmp_path: Path) -> None:
    b = RecordBuilder("http", modern=True)
    b.request("tools/call", {"name": "add", "arguments": {}}, id=1, ch="x1")
    result = {"resultType": "complete", "content": []}
    pretty = json.dumps({"jsonrpc": "2.0", "id": 1, "result": result}, indent=2)
    b.raw(pretty, "s2c", "x1")
    proc = serve(capture_of(tmp_path, b), call(1, "add") + "\n", "--timing", "fast")
    lines = proc.stdout.splitlines()
    assert len(lines) == 1 and json.loads(lines[0])["id"] == 1


def test_a_stray_response_keeps_its_recorded_id(tmp_path: Path) -> None:
    b = RecordBuilder(modern=True)
    b.request("tools/call", {"name": "w", "arguments": {}}, id=5)
    b.send({"jsonrpc": "2.0", "id": 99, "result": {"content": []}}, "s2c")  # answers nothing
    b.result(5, {"content": []})
    proc = serve(capture_of(tmp_path, b), call(7, "w") + "\n", "--timing", "fast")
    ids = [json.loads(line)["id"] for line in proc.stdout.splitlines()]
    assert sorted(ids) == [7, 99]  # the live id for the call; the stray as recorded


def test_an_http_error_from_the_forward_target_answers_the_client(tmp_path: Path) -> None:
    port = free_port()
    web = subprocess.Popen(
        [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        time.sleep(1.0)
        b = RecordBuilder(modern=True)
        b.request("tools/call", {"name": "known", "arguments": {}}, id=1)
        b.result(1, {"content": []})
        url = f"http://127.0.0.1:{port}/mcp"
        proc = serve(capture_of(tmp_path, b), call(3, "unknown") + "\n", "--forward", url)
    finally:
        web.kill()
        web.wait()
    answer = json.loads(proc.stdout)
    assert answer["id"] == 3 and "HTTP 501" in answer["error"]["message"]


def test_an_empty_ignore_pointer_is_a_usage_error(tmp_path: Path) -> None:
    b = RecordBuilder(modern=True)
    b.request("tools/list", {}, id=1)
    b.result(1, {"tools": []})
    proc = serve(capture_of(tmp_path, b), "", "--ignore", "")
    assert proc.returncode == 2 and b"whole message" in proc.stderr


def test_writing_over_the_capture_being_served_is_refused(tmp_path: Path) -> None:
    b = RecordBuilder(modern=True)
    b.request("tools/list", {}, id=1)
    b.result(1, {"tools": []})
    capture = capture_of(tmp_path, b)
    recorded = capture.read_bytes()
    link = tmp_path / "same.jsonl"
    link.symlink_to(capture)  # the same file under another name
    proc = serve(capture, "", "-w", str(link))
    assert proc.returncode == 2 and b"is the capture being read" in proc.stderr
    assert capture.read_bytes() == recorded  # the recording is untouched


@pytest.fixture
def listening(tmp_path: Path):  # type: ignore[no-untyped-def]
    """``mcpeek serve --listen`` of a capture whose tools/call was never answered."""
    b = RecordBuilder("http", modern=True)
    b.request("tools/list", {}, id=1, ch="x1")
    b.result(1, {"tools": []}, ch="x1")
    b.request("tools/call", {"name": "never", "arguments": {}}, id=2, ch="x2")
    proc = subprocess.Popen(
        mcpeek_argv("serve", str(capture_of(tmp_path, b)), "--listen", "127.0.0.1:0"),
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    line = proc.stderr.readline()
    url = re.search(r"http://\S+", line)
    assert url is not None, line
    yield proc, url.group(0)
    if proc.poll() is None:
        proc.kill()
    proc.wait()


def post(url: str, body: str, timeout: float = 5) -> tuple[int, bytes]:
    request = urllib.request.Request(
        url,
        data=body.encode(),
        headers={
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": "2026-07-28",
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


@pytest.mark.parametrize(
    ("body", "code"), [("hello", -32700), ('[{"jsonrpc":"2.0","id":1,"method":"ping"}]', -32600)]
)
def test_a_body_that_is_no_request_gets_400_with_the_error(listening, body: str, code: int) -> None:  # type: ignore[no-untyped-def]
    _, url = listening
    status, answer = post(url, body)
    assert status == 400 and json.loads(answer)["error"]["code"] == code


def test_ctrl_c_stops_the_mock_while_a_stream_is_open(listening) -> None:  # type: ignore[no-untyped-def]
    proc, url = listening

    def ask() -> None:
        with contextlib.suppress(OSError, http.client.HTTPException):  # the mock goes away
            post(url, call(1, "never"), 60)

    client = threading.Thread(target=ask, daemon=True)
    client.start()
    time.sleep(1.0)  # the stream is open, waiting for an answer that was never recorded
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=HANG_GUARD)  # (a mock that ignored Ctrl-C would fail here)
    client.join(timeout=HANG_GUARD)
    assert not client.is_alive()  # its open stream was let go with the mock
