"""The live-checks worker: it reads the whole capture and reports, whatever it meets."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from mcpeek.inspector.analysis import Analyzer
from mcpeek.inspector.cli import live, live_worker
from mcpeek.inspector.cli.live_protocol import Checked, FlowLine, Found, Ready, decoder
from mcpeek.inspector.records import Msg
from mcpeek.inspector.testing.records import RecordBuilder

DEEP = "[" * 5000 + "]" * 5000
WORKER = [sys.executable, "-m", "mcpeek.inspector.cli.live_worker"]


def capture(tmp_path: Path) -> Path:
    b = RecordBuilder()
    b.raw(DEEP)
    b.raw('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"a":' + DEEP + "}}")
    b.raw(
        '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":' + '{"a":' * 990 + "1" + "}" * 991
    )
    b.raw('{"jsonrpc":"1.0","id":2,"method":"ping"}')  # checked after them
    return b.save(tmp_path / "deep.jsonl")


def rules_of(out: str) -> set[tuple[str, int]]:
    found = set()
    for line in out.splitlines():
        said = decoder().decode(line)
        if isinstance(said, Found):
            found.add((said.violation.rule, said.violation.msgs[-1]))
    return found


def test_messages_nested_too_deep_do_not_stop_the_checks(tmp_path: Path) -> None:
    proc = subprocess.run(
        [*WORKER, str(capture(tmp_path))],
        input=live.DONE.decode(),  # the proxy is done: read the capture to its end
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    found = rules_of(proc.stdout)
    assert ("stdio.not-json", 1) in found
    assert ("jsonrpc.version", 4) in found
    assert not any(rule.startswith("inspector.") for rule, _ in found)


class _Stdin:
    buffer = io.BytesIO(live.DONE)


def test_a_bug_in_the_analysis_is_told_once_and_the_checks_go_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = capture(tmp_path)
    feed = Analyzer.feed

    def failing(self: Analyzer, record: Any) -> None:
        if isinstance(record, Msg) and record.seq in (1, 2):
            raise RuntimeError("boom")
        feed(self, record)

    monkeypatch.setattr(Analyzer, "feed", failing)
    monkeypatch.setattr(live_worker.signal, "signal", lambda *args: None)
    monkeypatch.setattr(live_worker.os, "nice", lambda n: 0)
    monkeypatch.setattr(live_worker, "below_the_traffic", lambda: None)
    monkeypatch.setattr(live_worker.gctune, "for_this_process", lambda: None)
    monkeypatch.setattr(sys, "stdin", _Stdin())
    out = io.BytesIO()
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(out))
    assert live_worker.main([str(path)]) == 0
    err = capsys.readouterr().err
    assert err.count("internal error in the live checks") == 1
    assert "RuntimeError: boom" in err
    assert ("jsonrpc.version", 4) in rules_of(out.getvalue().decode())


def busy_capture(tmp_path: Path) -> Path:
    """Enough findings that the worker is still writing them when its proxy dies."""
    b = RecordBuilder()
    for n in range(5000):
        b.raw(f'{{"jsonrpc":"1.0","id":{n},"method":"ping"}}')
    return b.save(tmp_path / "busy.jsonl")


@pytest.mark.parametrize("gone", ["stdin", "stdout", "both"])
def test_a_worker_whose_proxy_is_gone_exits_without_a_word(tmp_path: Path, gone: str) -> None:
    worker = subprocess.Popen(
        [*WORKER, str(busy_capture(tmp_path))],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert worker.stdin is not None and worker.stdout is not None and worker.stderr is not None
    assert decoder().decode(worker.stdout.readline()) == Ready()
    worker.stdout.readline()  # it is checking
    if gone in ("stdin", "both"):
        worker.stdin.close()  # EOF, never "done": the proxy was killed
    if gone in ("stdout", "both"):
        worker.stdout.close()
    else:
        worker.stdout.read()
    assert worker.wait(timeout=60) in (0, 1)
    assert worker.stderr.read() == b""  # no "Fatal Python error", no traceback, no note
    worker.stderr.close()
    if gone == "stdout":
        worker.stdin.close()


def ping_worker(tmp_path: Path) -> subprocess.Popen[bytes]:
    """A worker on a capture of one ping, once it said it is ready."""
    b = RecordBuilder()
    b.raw('{"jsonrpc":"2.0","id":1,"method":"ping"}')
    worker = subprocess.Popen(
        [*WORKER, str(b.save(tmp_path / "c.jsonl"))],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert worker.stdin is not None and worker.stdout is not None
    assert decoder().decode(worker.stdout.readline()) == Ready()
    return worker


@pytest.mark.skipif(not hasattr(os, "SCHED_IDLE"), reason="Linux's scheduling classes")
def test_the_ready_worker_runs_on_cores_nothing_else_wants(tmp_path: Path) -> None:
    worker = ping_worker(tmp_path)
    assert worker.stdin is not None and worker.stdout is not None
    try:
        assert os.sched_getscheduler(worker.pid) == os.SCHED_IDLE
        assert os.sched_getscheduler(0) != os.SCHED_IDLE  # (its proxy's is left alone)
    finally:
        worker.stdin.write(live.DONE)
        worker.stdin.close()
        worker.stdout.read()
        worker.stdout.close()
        assert worker.wait(timeout=60) == 0


def test_the_worker_speaks_typed_lines_and_a_violation_keeps_its_context(tmp_path: Path) -> None:
    b = RecordBuilder()
    b.raw('{"jsonrpc":"1.0","id":7,"method":"ping"}')
    proc = subprocess.run(
        [
            *WORKER,
            "--flows",
            str(b.save(tmp_path / "c.jsonl")),
        ],
        input=live.DONE,
        capture_output=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    said = [decoder().decode(line) for line in proc.stdout.splitlines()]
    assert said[0] == Ready() and said[-1] == Checked(1)
    assert any(isinstance(s, FlowLine) and "ping" in s.line for s in said)
    found = [s.violation for s in said if isinstance(s, Found)]
    version = next(v for v in found if v.rule == "jsonrpc.version")
    assert (version.method, version.msg_id, version.msgs) == ("ping", 7, [1])
    assert '"id":7' in version.excerpt


def test_a_request_left_unanswered_is_reported_while_the_worker_follows(tmp_path: Path) -> None:
    """The worker follows through run_capture, whose clock ticks while it waits: the
    flag comes before the proxy says done."""
    import threading
    import time

    from mcpeek.inspector.capture import CaptureWriter

    path = tmp_path / "c.jsonl"
    long_ago = time.time() - 600  # past any timeout
    with CaptureWriter(path, transport="stdio", target=["s"]) as writer:
        writer.write(
            Msg(dir="c2s", ch="stdio", raw='{"jsonrpc":"2.0","id":2,"method":"ping"}', t=long_ago)
        )
    worker = subprocess.Popen(
        [*WORKER, str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert worker.stdin is not None and worker.stdout is not None
    guard = threading.Timer(60, worker.kill)  # a worker that never says it fails, not hangs
    guard.start()
    try:
        said = [decoder().decode(worker.stdout.readline()) for _ in range(2)]
    finally:
        guard.cancel()
        worker.stdin.write(live.DONE)
        worker.stdin.close()
        worker.stdout.read()
        worker.stdout.close()
        worker.wait(timeout=60)
    assert said[0] == Ready()
    assert isinstance(said[1], Found) and said[1].violation.rule == "request.unanswered"


def test_flow_lines_tell_of_a_call_in_flight_past_slow(tmp_path: Path) -> None:
    # What `mcpeek stdio --log flows --slow 1` prints: a line for the hung call while
    # it hangs (the request was sent 10 s ago, by the clock the worker reads).
    b = RecordBuilder(start=time.time() - 10)
    b.request("tools/call", {"name": "hang", "arguments": {}}, id=1)
    path = b.save(tmp_path / "hung.jsonl")
    worker = [*WORKER, str(path)]
    proc = subprocess.run(
        [*worker, "--flows", "--no-check", "--slow", "1"],
        input=live.DONE.decode(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    said = [decoder().decode(line) for line in proc.stdout.splitlines()]
    lines = [s.line for s in said if isinstance(s, FlowLine)]
    slow = [line for line in lines if "(slow: no answer after" in line]
    assert len(slow) == 1 and "tools/call hang" in slow[0] and "← pending" in slow[0], lines
    assert lines.index(slow[0]) < len(lines) - 1  # and then its end (unanswered) after it


@pytest.mark.parametrize("cut", [False, True])
def test_a_capture_cut_short_leaves_no_request_unanswered_by_its_end(
    tmp_path: Path, cut: bool
) -> None:
    """After a full disk, the client got answers the file lacks: told ``cut``, the worker
    does not end the session, so it blames no server for them. (A recent request: one
    past its timeout could be judged by a tick before the thread reading stdin has read
    ``cut``, on a loaded machine; ticks are tested below, without a race.)"""
    b = RecordBuilder(start=time.time())
    b.request("tools/list", id=2)  # its answer reached the client, not the file
    path = b.save(tmp_path / "cut.jsonl")
    proc = subprocess.run(
        [*WORKER, str(path)],
        input=(live.CUT if cut else b"") + live.DONE,
        capture_output=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    said = [decoder().decode(line) for line in proc.stdout.splitlines()]
    unanswered = [
        s for s in said if isinstance(s, Found) and s.violation.rule == "request.unanswered"
    ]
    assert bool(unanswered) is not cut
    assert said[-1] == Checked(1)  # read to its end all the same


def test_a_cut_capture_is_neither_ticked_nor_finished() -> None:
    import threading

    class Checks:
        def __init__(self) -> None:
            self.calls: list[str] = []

        def tick(self, now: float) -> None:
            self.calls.append("tick")

        def finish(self) -> None:
            self.calls.append("finish")

        def feed(self, record: object) -> None:
            self.calls.append("feed")

    checks, cut = Checks(), threading.Event()
    traffic = live_worker._ProxyTraffic(checks, checks, cut)  # type: ignore[arg-type]
    traffic.tick(1.0)
    cut.set()
    traffic.tick(2.0)
    traffic.finish()
    assert checks.calls == ["tick"]


def test_the_worker_feeds_the_analyzer_guarded_and_counts_what_it_checked(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # _ProxyTraffic feeds the Analyzer itself (not through the guard's feed): a bug is
    # still told once, the next records are still checked, a closed pipe passes through.
    import threading

    from mcpeek.inspector.analysis.guarded import GuardedAnalyzer
    from tests.inspector.analysis.test_guarded import Flaky, four_pings_and_a_bug

    records, listener, guard = four_pings_and_a_bug("the live checks")
    traffic = live_worker._ProxyTraffic(guard, guard, threading.Event())
    for record in records:  # the header first
        traffic.feed(record)
    traffic.finish()
    assert len(listener.seen) == 4 and traffic.checked == 4
    err = capsys.readouterr().err
    assert err == "mcpeek: internal error in the live checks (RuntimeError: boom); they go on\n"
    broken = GuardedAnalyzer(Analyzer([Flaky(BrokenPipeError())]), "the live checks")
    traffic = live_worker._ProxyTraffic(broken, broken, threading.Event())
    header, first, second, *_ = records
    traffic.feed(header)
    traffic.feed(first)
    with pytest.raises(BrokenPipeError):
        traffic.feed(second)


@pytest.mark.parametrize(
    ("said", "told"),
    [
        (live.DONE, True),
        (live.STOP, True),
        (live.CUT, False),  # the capture stops short: the worker goes on following
        (live.CUT + live.DONE, True),
    ],
)
def test_done_or_stop_cuts_a_wait_between_looks_short(said: bytes, told: bool) -> None:
    """``told`` ends the worker's wait between looks at the capture (up to
    POLL_LONGEST once idle): a worker told it is done does not sleep first."""
    commands = live_worker.ProxyCommands()
    heard = threading.Event()
    source = _Held(said, heard)
    thread = threading.Thread(target=commands.listen, args=(source,), daemon=True)
    thread.start()
    assert heard.wait(5)
    assert source.settled.wait(5)  # the listener is back for more: it took what was said
    assert commands.told.is_set() is told
    source.release.set()  # EOF: the proxy is gone, and any wait ends
    thread.join(5)
    assert commands.told.is_set()


class _Held(io.RawIOBase):
    """Gives ``said`` in one read, then blocks until released (a proxy still there)."""

    def __init__(self, said: bytes, heard: threading.Event) -> None:
        self._said = said
        self._heard = heard
        self.settled = threading.Event()  # the listener is back for more
        self.release = threading.Event()

    def read(self, size: int = -1) -> bytes:
        if self._said:
            said, self._said = self._said, b""
            self._heard.set()
            return said
        self.settled.set()
        self.release.wait(5)
        return b""


def _voluntary_switches(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return sum(
        int(line.split()[1]) for line in status.splitlines() if line.startswith("voluntary_ctxt")
    )


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc (Linux)")
def test_a_worker_beside_an_idle_session_seldom_wakes(tmp_path: Path) -> None:
    """Once nothing comes, the worker looks at the capture at most 4 times a second
    (POLL_LONGEST), not 50: over two idle seconds, far fewer than 100 wake-ups."""
    worker = ping_worker(tmp_path)
    assert worker.stdin is not None and worker.stdout is not None
    try:
        time.sleep(1.0)  # the waits grow to their longest
        before = _voluntary_switches(worker.pid)
        time.sleep(2.0)
        woke = _voluntary_switches(worker.pid) - before
        worker.stdin.write(live.DONE)
        worker.stdin.close()
        said = [decoder().decode(line) for line in worker.stdout.read().splitlines()]
        assert said[-1] == Checked(1)  # (after its findings: the ping got no answer)
    finally:
        worker.kill()
        worker.wait()
        worker.stdout.close()
    assert woke < 40, woke
