"""``mcpeek show``: one line per flow, text and JSON, from a file or following one."""

from __future__ import annotations

import json
import subprocess
import threading
import time
from pathlib import Path

import pytest

from mcpeek.inspector.capture import CaptureWriter
from mcpeek.inspector.cli.main import main
from mcpeek.inspector.records import Event, Msg
from mcpeek.inspector.testing.records import RecordBuilder
from tests.conftest import mcpeek_argv


def sample(tmp_path: Path) -> Path:
    b = RecordBuilder(modern=True)
    b.request("tools/call", {"name": "get_weather"}, id=3, meta={"progressToken": 3})
    b.notify("notifications/progress", {"progressToken": 3, "progress": 1})
    b.notify("notifications/progress", {"progressToken": 3, "progress": 2})
    b.wait(0.0123)
    b.result(3, {"content": []})
    b.request("tools/call", {"name": "deploy"}, id=4)
    b.input_required(4, state="s")
    b.request("tools/call", {"name": "deploy", "requestState": "s"}, id=5)
    b.error(5, -32603, "boom")
    b.notify("notifications/tools/list_changed")
    b.request("resources/read", {"uri": "file:///x"}, id=6)
    return b.save(tmp_path / "c.jsonl")


def test_text_lines(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", str(sample(tmp_path))]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 4
    first = lines[0].split("  ")
    assert first[1:] == ["→ tools/call get_weather", "id 3", "← complete", first[4], "[2 progress]"]
    assert first[4].endswith(" ms") and 12 < float(first[4][:-3]) < 20
    assert "ids 4→5" in lines[1] and "← error" in lines[1] and "[2 rounds]" in lines[1]
    assert lines[2].endswith("← notifications/tools/list_changed  (notification)")
    assert "resources/read file:///x  id 6  ← unanswered" in lines[3]


def test_json_objects(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", "--format", "json", str(sample(tmp_path))]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    # the flows, then one conversation line (told apart by its "kind"; flows have none)
    objects = [o for o in lines if "kind" not in o]
    assert lines[: len(objects)] == objects
    assert [o.get("kind") for o in lines[len(objects) :]] == ["conversation"]
    assert [o["status"] for o in objects] == ["complete", "error", "notification", "unanswered"]
    first = objects[0]
    assert set(first) >= {
        "flow",
        "method",
        "name",
        "ids",
        "status",
        "latency_ms",
        "msgs",
        "chain",
        "era",
    }
    assert first["ids"] == [3] and first["msgs"] == [1, 2, 3, 4] and first["era"] == "modern"
    assert objects[1]["chain"] == [4, 5]
    assert objects[2]["name"] is None and objects[2]["latency_ms"] is None


def test_json_ends_with_each_conversations_surface(capsys: pytest.CaptureFixture[str]) -> None:
    capture = Path(__file__).resolve().parents[3] / "captures" / "legacy-stdio.jsonl"
    assert main(["show", "--format", "json", str(capture)]) == 0
    last = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert last["kind"] == "conversation" and last["conversation"] == "stdio"
    assert (last["era"], last["protocol_version"]) == ("legacy", "2025-11-25")
    assert last["server_info"]["name"] == "mcpeek-sdk-tour-server"
    assert sorted(last["lists"]["tools"]) == ["add", "confirm", "count", "get_weather"]
    assert last["lists"]["prompts"]["greet"]["name"] == "greet"
    assert last["drift"] == [] and "history" in last and "undeclared" in last


def test_text_has_no_conversation_line(capsys: pytest.CaptureFixture[str]) -> None:
    capture = Path(__file__).resolve().parents[3] / "captures" / "legacy-stdio.jsonl"
    assert main(["show", str(capture)]) == 0
    assert "conversation" not in capsys.readouterr().out


def test_bad_input_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", str(tmp_path / "missing.jsonl")]) == 2
    assert "no such file" in capsys.readouterr().err
    not_capture = tmp_path / "x.jsonl"
    not_capture.write_text("hello\n")
    assert main(["show", str(not_capture)]) == 2
    assert "not an mcpeek capture" in capsys.readouterr().err


def test_follow_prints_flows_as_another_process_appends(tmp_path: Path) -> None:
    path = tmp_path / "live.jsonl"
    writer = CaptureWriter(path, transport="stdio", target=["srv"])
    proc = subprocess.Popen(
        mcpeek_argv("show", "--follow", str(path)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(iter(proc.stdout.readline, "")))
    reader.start()

    def say(dir: str, text: str) -> None:
        writer.write(Msg(dir=dir, ch="stdio", raw=text))  # type: ignore[arg-type]

    say("c2s", '{"jsonrpc":"2.0","id":1,"method":"tools/list"}')
    say("s2c", '{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}')
    deadline = time.monotonic() + 15
    while not lines and time.monotonic() < deadline:
        time.sleep(0.05)
    assert lines and "tools/list  id 1  ← complete" in lines[0]
    say("c2s", '{"jsonrpc":"2.0","id":2,"method":"ping"}')
    writer.write(Event(event="exit", code=0))
    writer.close()
    proc.wait(timeout=15)
    reader.join(5)
    assert proc.returncode == 0
    assert len(lines) == 2 and "ping  id 2  ← unanswered" in lines[1]


@pytest.mark.parametrize(("follow", "code"), [(False, 130), (True, 0)])
def test_ctrl_c_ends_follow_quietly_but_cuts_a_plain_show_short(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, follow: bool, code: int
) -> None:
    from mcpeek.inspector.capture.reader import CaptureReader

    read = CaptureReader.records

    def interrupted(self: CaptureReader, *args: object, **kwargs: object):  # type: ignore[no-untyped-def]
        yield next(iter(read(self, *args, **kwargs)))  # type: ignore[arg-type]
        raise KeyboardInterrupt  # (following, the reader would wait for more forever)

    monkeypatch.setattr(CaptureReader, "records", interrupted)
    argv = ["show", *(["--follow"] if follow else []), str(sample(tmp_path))]
    assert main(argv) == code


def test_a_message_nested_too_deep_is_shown_like_one_not_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    b = RecordBuilder()
    b.raw("[" * 5000 + "]" * 5000)
    b.raw('{"jsonrpc":"2.0","id":1,"method":"ping"}')
    b.result(1, {})
    assert main(["show", str(b.save(tmp_path / "deep.jsonl"))]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2
    assert "ping" in lines[1]


def test_a_line_that_is_not_json_rpc_is_shown_by_its_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    b = RecordBuilder()
    b.raw("Starting server on port 8080 " + "." * 500, dir="s2c")
    b.raw(b"\xff\x1b[31m", dir="s2c")  # not UTF-8, and a terminal escape
    assert main(["show", str(b.save(tmp_path / "logs.jsonl"))]) == 0
    first, second = capsys.readouterr().out.splitlines()
    assert '← "Starting server on port 8080 ...' in first and first.endswith('…"  (orphan)')
    assert len(first) < 160  # cut, not 500 dots
    assert "\x1b" not in second and '\\u001b[31m"  (orphan)' in second


def test_follow_ends_when_the_writer_lets_go_of_a_capture_without_exit_event(
    tmp_path: Path,
) -> None:
    # An HTTP proxy writes no exit event: `show -f` used to wait forever on its
    # capture, finished or not.
    path = tmp_path / "http.jsonl"
    writer = CaptureWriter(path, transport="http", target="http://127.0.0.1:1/mcp")
    writer.write(Msg(dir="c2s", ch="x1", raw='{"jsonrpc":"2.0","id":1,"method":"ping"}'))
    proc = subprocess.Popen(
        mcpeek_argv("show", "--follow", str(path)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(0.5)
    assert proc.poll() is None  # still written: it keeps following
    writer.write(Msg(dir="s2c", ch="x1", raw='{"jsonrpc":"2.0","id":1,"result":{}}'))
    writer.close()
    out, _ = proc.communicate(timeout=15)
    assert proc.returncode == 0
    assert "ping  id 1  ← complete" in out  # what came before the writer let go is read
    finished = subprocess.run(
        mcpeek_argv("show", "--follow", str(path)), capture_output=True, text=True, timeout=15
    )
    assert finished.returncode == 0 and "ping  id 1  ← complete" in finished.stdout
