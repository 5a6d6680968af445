"""The proxy's side of the live checks: the relay never waits on them, and they print
at most ten flags per rule."""

from __future__ import annotations

import asyncio
import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mcpeek.inspector.capture import read_records
from mcpeek.inspector.capture.writer import CaptureWriter
from mcpeek.inspector.cli import live
from mcpeek.inspector.cli.live_protocol import Checked, Ready, decoder
from mcpeek.inspector.cli.recording import RecordingErrors
from mcpeek.inspector.pipeline import Recorder
from mcpeek.inspector.records import Event, Violation
from tests.conftest import mcpeek_argv, peer_argv

READY = '{"k":"ready"}'
# A worker that starts, then lags behind for ever: it checks 3 records, and only a
# "stop" makes it say so. ``obeys`` False: it does not even hear the stop.
LAGGING_WORKER = """
import sys
obeys = sys.argv[1] == "obeys"
print('{"k":"ready"}', flush=True)
for line in sys.stdin:
    if line == "stop\\n" and obeys:
        print('{"k":"checked","records":3}', flush=True)
        break
import time
time.sleep(3600)
"""


def lagging(monkeypatch: pytest.MonkeyPatch, obeys: bool) -> None:
    def argv(module: str, *args: str) -> list[str]:
        return [sys.executable, "-c", LAGGING_WORKER, "obeys" if obeys else "deaf"]

    monkeypatch.setattr(live, "python_module_argv", argv)


def finish_after(tmp_path: Path, recorded: int) -> list[str]:
    """What a proxy that recorded ``recorded`` records says once its checks finish."""
    said: list[str] = []

    async def session() -> None:
        writer = CaptureWriter(tmp_path / "c.jsonl", transport="stdio", target=["s"])
        checks = live.LiveChecks(
            writer, said.append, checks=True, flows=False, recorded=lambda: recorded
        )
        await checks.start()
        await asyncio.wait_for(checks.finish(), 60)  # a guard: it must end on its own
        writer.close()

    asyncio.run(session())
    return said


def test_a_lagging_worker_is_stopped_and_says_what_it_left_unchecked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lagging(monkeypatch, obeys=True)
    said = finish_after(tmp_path, recorded=10)
    assert len(said) == 1
    assert said[0].startswith("live checks stopped 7 records before the end of the capture")
    assert said[0].endswith(f"run mcpeek lint {tmp_path / 'c.jsonl'} to check it all")


def test_a_worker_that_does_not_stop_is_killed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lagging(monkeypatch, obeys=False)
    said = finish_after(tmp_path, recorded=10)
    assert said == [
        "live checks stopped before the end of the capture; "
        f"run mcpeek lint {tmp_path / 'c.jsonl'} to check it all"
    ]


def test_at_most_ten_flags_per_rule_then_one_line_counts_the_rest(capture_path: Path) -> None:
    pings = b"".join(
        b'{"jsonrpc":"1.0","id":%d,"method":"ping"}\n' % n for n in range(1, 26)
    )  # 25 breaches of jsonrpc.version
    proc = subprocess.run(
        mcpeek_argv("stdio", "-w", str(capture_path), "--", *peer_argv("byte_server.py")),
        input=pings,
        capture_output=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.decode().splitlines()
    assert sum("ERROR jsonrpc.version" in line for line in lines) == live.PRINTED_PER_RULE
    assert "mcpeek: jsonrpc.version: 15 more flags not printed (every one is in the capture)" in (
        lines
    )
    recorded = [r for r in read_records(capture_path)[1] if isinstance(r, Violation)]
    assert sum(v.rule == "jsonrpc.version" for v in recorded) == 25
    assert f"{len(recorded)} violations" in lines[-1]  # the summary counts them all


def test_the_workers_protocol_ends_with_how_many_records_it_checked(tmp_path: Path) -> None:
    capture = tmp_path / "c.jsonl"
    with CaptureWriter(capture, transport="stdio", target=["s"]) as writer:
        writer.write(Violation(rule="x", severity="error", msgs=[], message="m", spec=""))
    proc = subprocess.run(
        [sys.executable, "-m", "mcpeek.inspector.cli.live_worker", str(capture)],
        input=live.DONE,
        capture_output=True,
        timeout=60,
    )
    lines = [decoder().decode(line) for line in proc.stdout.splitlines()]
    assert lines[0] == Ready() and lines[-1] == Checked(0)  # violations aside


# A worker that reports one finding, typed as the real one does, then its count.
REPORTING_WORKER = """
import sys
from mcpeek.inspector.cli.live_protocol import Checked, FlowLine, Found, Ready
from mcpeek.rules.engine import Reported
import msgspec
say = lambda m: print(msgspec.json.encode(m).decode(), flush=True)
say(Ready())
print("not the protocol: ignored", flush=True)
say(FlowLine("a flow line"))
say(Found(Reported(rule="jsonrpc.version", severity="error", msgs=[1], message="bad",
                   spec="https://x", method="ping", msg_id=7, excerpt="{...}")))
sys.stdin.readline()  # "done"
say(Checked(1))
"""


def test_the_proxy_decodes_the_workers_typed_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        live, "python_module_argv", lambda module, *args: [sys.executable, "-c", REPORTING_WORKER]
    )
    said = finish_after(tmp_path, recorded=1)
    assert said == ["a flow line", "ERROR jsonrpc.version ping id 7: bad  https://x"]
    recorded = [r for r in read_records(tmp_path / "c.jsonl")[1] if isinstance(r, Violation)]
    assert [(v.rule, v.msgs, v.message, v.spec) for v in recorded] == [
        ("jsonrpc.version", [1], "bad", "https://x")
    ]


def test_a_proxy_loads_the_rules_only_when_it_starts_live_checks() -> None:
    code = (
        "import sys, mcpeek.inspector.cli.live, mcpeek.inspector.cli.commands.stdio\n"
        "print(any(m == 'mcpeek.rules' or m.startswith('mcpeek.rules.') for m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "False", out.stderr


# A worker that repeats what its proxy told it, as a flow line, once told "done".
HEARING_WORKER = """
import sys
print('{"k":"ready"}', flush=True)
heard = []
for line in sys.stdin:
    heard.append(line.strip())
    if line == "done\\n":
        break
print('{"k":"flow","line":"heard ' + " ".join(heard) + '"}', flush=True)
print('{"k":"checked","records":0}', flush=True)
"""


@pytest.mark.parametrize("full", [False, True])
def test_a_capture_that_could_not_be_written_is_cut_for_the_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, full: bool
) -> None:
    monkeypatch.setattr(
        live, "python_module_argv", lambda module, *args: [sys.executable, "-c", HEARING_WORKER]
    )
    said: list[str] = []

    async def session() -> None:
        writer = CaptureWriter(tmp_path / "c.jsonl", transport="stdio", target=["s"])
        checks = live.LiveChecks(writer, said.append, checks=True, flows=False)
        await checks.start()
        if full:  # what a write on a full disk leaves (CaptureWriter._write_out)
            writer.error = OSError(errno.ENOSPC, "No space left on device")
        await asyncio.wait_for(checks.finish(), 60)
        writer.close()

    asyncio.run(session())
    assert said == (["heard cut done"] if full else ["heard done"])


# A worker that says each word its proxy tells it as soon as it hears it.
ECHOING_WORKER = """
import sys
print('{"k":"ready"}', flush=True)
for line in sys.stdin:
    print('{"k":"flow","line":"heard ' + line.strip() + '"}', flush=True)
    if line == "done\\n":
        break
print('{"k":"checked","records":0}', flush=True)
"""


def test_a_failed_write_is_told_to_the_worker_by_who_met_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The recorder's error handler tells the live checks that the capture stops
    short, there and then (no watcher polling the writer): the worker hears "cut"
    while the traffic still flows, before "done"."""
    monkeypatch.setattr(
        live, "python_module_argv", lambda module, *args: [sys.executable, "-c", ECHOING_WORKER]
    )
    said: list[str] = []
    told: list[str] = []

    async def session() -> None:
        writer = CaptureWriter(tmp_path / "c.jsonl", transport="stdio", target=["s"])
        checks = live.LiveChecks(writer, said.append, checks=True, flows=False)
        recorder = Recorder(
            writer, on_error=RecordingErrors(writer, told.append, checks.capture_cut)
        )
        await checks.start()
        full = os.open(os.devnull, os.O_RDONLY)  # a write to it fails, as on a full disk
        os.dup2(full, writer._fd)
        os.close(full)
        recorder.emit([Event(event="spawn")])
        recorder.emit([Event(event="spawn")])  # the second failure is not told again
        assert writer.error is not None

        async def heard_cut() -> None:  # the worker's answer, not a timer
            while "heard cut" not in said:
                await asyncio.sleep(0.01)

        await asyncio.wait_for(heard_cut(), 60)  # (the limit only keeps a bug from hanging)
        await asyncio.wait_for(checks.finish(), 60)
        writer.close()

    asyncio.run(session())
    assert said == ["heard cut", "heard done"]
    assert len(told) == 1 and "cannot write the capture" in told[0]
