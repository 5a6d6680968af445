"""The stdio relay as a real process: byte exactness, crashes, signals, back-pressure."""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mcpeek.inspector.capture import read_records
from mcpeek.inspector.proxy.pipes import CHUNK, PIPE_SIZE
from mcpeek.inspector.records import Event, Msg, Stderr
from mcpeek.inspector.testing.wire import stream_bytes
from tests.conftest import mcpeek_argv, peer_argv

pytestmark = pytest.mark.e2e

ODD_PAYLOAD_PARTS = [
    b'{"jsonrpc":"2.0","id":1,"result":{}}\n',
    b"\n",  # blank line
    b"   \n",  # whitespace-only line
    b'{"jsonrpc":"2.0","method":"x","params":{"s":"caf\xc3\xa9"}}\r\n',  # CRLF, UTF-8
    b"\xff\xfe not utf-8 \x80\n",  # invalid UTF-8
    b"nul\x00byte\n",
    b'{"jsonrpc":"2.0","id":2,"result":{"big":"' + b"x" * (16 * 1024 * 1024) + b'"}}\n',
    b"last line without newline",
]
ODD_PAYLOAD = b"".join(ODD_PAYLOAD_PARTS)


def run(
    argv: list[str], stdin: bytes = b"", timeout: float = 60
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(argv, input=stdin, capture_output=True, timeout=timeout)


def events(records: list) -> list[Event]:
    return [r for r in records if isinstance(r, Event)]


def test_byte_exact_both_ways_with_odd_bytes(tmp_path: Path, capture_path: Path) -> None:
    send = tmp_path / "send.bin"
    send.write_bytes(ODD_PAYLOAD)
    received = tmp_path / "received.bin"
    client_payload = ODD_PAYLOAD[::-1][:1000] + b"\n" + ODD_PAYLOAD  # different from the server's
    proc = run(
        mcpeek_argv(
            "stdio",
            "-w",
            str(capture_path),
            "--",
            *peer_argv(
                "byte_server.py",
                "--send",
                str(send),
                "--recv-to",
                str(received),
                "--stderr-lines",
                "5",
            ),
        ),
        stdin=client_payload,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout == ODD_PAYLOAD
    assert received.read_bytes() == client_payload
    header, records, problems = read_records(capture_path)
    assert problems == []
    assert header.transport == "stdio" and header.v == 1
    assert stream_bytes(records, "s2c") == ODD_PAYLOAD
    assert stream_bytes(records, "c2s") == client_payload
    # stderr: passed through unchanged, and recorded line by line
    server_err = stream_bytes(records, "stderr")
    assert server_err.count(b"byte_server:") == 5
    assert server_err in proc.stderr
    seqs = [r.seq for r in records]
    assert seqs == list(range(1, len(records) + 1))
    msgs = [r for r in records if isinstance(r, Msg)]
    s2c = [m for m in msgs if m.dir == "s2c"]
    assert [m.raw_b64 is not None for m in s2c] == [False] * 4 + [True] + [False] * 3
    assert [m.partial for m in s2c] == [False] * 7 + [True]
    assert s2c[5].raw == "nul\x00byte"


def test_stderr_lines_interleave_in_order(tmp_path: Path, capture_path: Path) -> None:
    proc = run(
        mcpeek_argv(
            "stdio",
            "-w",
            str(capture_path),
            "--",
            *peer_argv("byte_server.py", "--stderr-lines", "3"),
        )
    )
    assert proc.returncode == 0
    text = proc.stderr.decode()
    lines = text.splitlines()
    # the server's lines come through whole; mcpeek's own lines are prefixed
    assert [ln for ln in lines if ln.startswith("byte_server:")] == [
        "byte_server: line 0",
        "byte_server: line 1",
        "byte_server: line 2",
    ]
    assert all(ln.startswith(("byte_server:", "mcpeek:")) for ln in lines), text
    _, records, _ = read_records(capture_path)
    assert [r.raw for r in records if isinstance(r, Stderr)] == [
        "byte_server: line 0",
        "byte_server: line 1",
        "byte_server: line 2",
    ]


def test_stderr_bytes_that_are_not_utf8_pass_unchanged(capture_path: Path) -> None:
    script = (
        "import os; os.write(2, b'a\\xff\\xfeb\\n'); os.write(2, b'ok caf\\xc3\\xa9\\n');"
        " os.write(2, b'tail\\x80')"
    )
    proc = run(mcpeek_argv("stdio", "-w", str(capture_path), "--", sys.executable, "-c", script))
    assert proc.returncode == 0, proc.stderr[-2000:]
    # exactly the server's bytes (mcpeek ends the cut line before its own lines)
    assert b"a\xff\xfeb\nok caf\xc3\xa9\ntail\x80\n" in proc.stderr
    _, records, problems = read_records(capture_path)
    assert problems == []
    lines = [r for r in records if isinstance(r, Stderr)]
    assert [(r.raw, r.raw_b64, r.partial) for r in lines] == [
        (None, "Yf/+Yg==", False),
        ("ok café", None, False),
        (None, "dGFpbIA=", True),
    ]
    assert stream_bytes(records, "stderr") == b"a\xff\xfeb\nok caf\xc3\xa9\ntail\x80"


def test_exit_code_is_the_servers(capture_path: Path) -> None:
    proc = run(
        mcpeek_argv(
            "stdio", "-w", str(capture_path), "--", *peer_argv("byte_server.py", "--exit", "7")
        )
    )
    assert proc.returncode == 7
    _, records, _ = read_records(capture_path)
    kinds = [e.event for e in events(records)]
    assert kinds[0] == "spawn" and kinds[-1] == "exit"
    assert {"client-eof", "server-eof"} <= set(kinds)
    assert events(records)[-1].code == 7


def test_server_killed_mid_message(tmp_path: Path, capture_path: Path) -> None:
    send = tmp_path / "send.bin"
    send.write_bytes(b'{"jsonrpc":"2.0","id":1,"result":{"half":"' + b"y" * 100_000)
    proc = run(
        mcpeek_argv(
            "stdio",
            "-w",
            str(capture_path),
            "--",
            *peer_argv("byte_server.py", "--send", str(send), "--kill-self-after", "5000"),
        ),
        stdin=b'{"jsonrpc":"2.0","id":1,"method":"tools/call"}\n',
    )
    assert proc.returncode == 128 + signal.SIGKILL
    _, records, problems = read_records(capture_path)
    assert problems == []
    assert stream_bytes(records, "s2c") == proc.stdout  # the half message, recorded as partial
    assert proc.stdout and not proc.stdout.endswith(b"\n")
    assert events(records)[-1].event == "exit" and events(records)[-1].signal == signal.SIGKILL


def test_client_closes_stdin_server_exits(capture_path: Path) -> None:
    # A long grace: on a loaded machine the server may take a while, and this test
    # is about EOF being passed on, not about escalation.
    proc = run(
        mcpeek_argv(
            "stdio", "--grace", "30", "-w", str(capture_path), "--", *peer_argv("byte_server.py")
        ),
        stdin=b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n',
    )
    assert proc.returncode == 0
    _, records, _ = read_records(capture_path)
    kinds = [e.event for e in events(records)]
    assert kinds.index("client-eof") < kinds.index("exit")
    assert not any(e.event == "note" for e in events(records))  # no SIGTERM was needed


def test_server_ignoring_sigterm_gets_sigkill(capture_path: Path) -> None:
    proc = start_armed(capture_path, ["--grace", "0.3"], "--ignore-term")
    proc.communicate(timeout=30)  # closes stdin: EOF, grace, SIGTERM (ignored), SIGKILL
    assert proc.returncode == 128 + signal.SIGKILL
    _, records, _ = read_records(capture_path)
    notes = [e.message for e in events(records) if e.event == "note"]
    assert notes == ["sending SIGTERM to the server", "sending SIGKILL to the server"]


def test_sigterm_is_forwarded(capture_path: Path) -> None:
    proc = start_armed(capture_path, [], "--on-term-exit", "5")
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=20)
    assert proc.returncode == 5
    assert b"byte_server: got SIGTERM" in err


def test_unstartable_server(capture_path: Path) -> None:
    proc = run(mcpeek_argv("stdio", "-w", str(capture_path), "--", "/no/such/server-binary"))
    assert proc.returncode == 2
    lines = proc.stderr.decode().strip().splitlines()
    # One line: no "recording to" a capture that a failed start does not leave.
    assert lines == ["mcpeek: cannot start the server: /no/such/server-binary: command not found"]
    assert not capture_path.exists()  # a failed start leaves no empty capture behind


def test_nothing_but_the_server_on_stdout(capture_path: Path) -> None:
    proc = run(
        mcpeek_argv("stdio", "-w", str(capture_path), "--", *peer_argv("byte_server.py")),
        stdin=b"hello\n",
    )
    assert proc.stdout == b""
    assert b"mcpeek: recording to" in proc.stderr


def test_backpressure_bounds_what_mcpeek_buffers(tmp_path: Path, capture_path: Path) -> None:
    """A server that never reads: the client soon cannot write any more."""
    proc = subprocess.Popen(
        mcpeek_argv(
            "stdio",
            "--grace",
            "0.2",
            "-w",
            str(capture_path),
            "--",
            *peer_argv("byte_server.py", "--no-read", "--linger", "30"),
        ),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdin is not None
    os.set_blocking(proc.stdin.fileno(), False)
    line = b'{"jsonrpc":"2.0","method":"notifications/x","params":{"p":"' + b"z" * 1000 + b'"}}\n'
    accepted = 0
    stalled_since = None
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and accepted < 256 * 1024 * 1024:
        try:
            accepted += os.write(proc.stdin.fileno(), line)
            stalled_since = None
        except BlockingIOError:
            stalled_since = stalled_since or time.monotonic()
            if time.monotonic() - stalled_since > 1.0:
                break
            time.sleep(0.01)
    proc.kill()
    proc.wait()
    # pipe buffers (ours and the server's) plus asyncio's high-water marks: a few MB at most
    assert accepted < 8 * 1024 * 1024, accepted


def test_killed_mcpeek_leaves_a_readable_capture(tmp_path: Path, capture_path: Path) -> None:
    send = tmp_path / "send.bin"
    send.write_bytes(
        (b'{"jsonrpc":"2.0","method":"notifications/message","params":{}}\n') * 400_000
    )
    proc = subprocess.Popen(
        mcpeek_argv(
            "stdio",
            "-w",
            str(capture_path),
            "--",
            *peer_argv("byte_server.py", "--send", str(send)),
        ),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdout is not None
    got = 0
    while got < 4_000_000:  # mid-stream: read some, then kill
        got += len(proc.stdout.read1(1 << 16))
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    header, records, problems = read_records(capture_path)
    msgs = [r for r in records if isinstance(r, Msg)]
    assert header.v == 1 and len(msgs) > 1000
    assert all(
        m.raw == '{"jsonrpc":"2.0","method":"notifications/message","params":{}}' for m in msgs
    )
    assert all(p.endswith("ignored") for p in problems)  # at most a torn last line


def start_armed(
    capture_path: Path, options: list[str], *server_args: str
) -> subprocess.Popen[bytes]:
    """mcpeek over byte_server, returned once the server has set up its signal handling."""
    proc = subprocess.Popen(
        mcpeek_argv(
            "stdio",
            *options,
            "-w",
            str(capture_path),
            "--",
            *peer_argv("byte_server.py", *server_args),
        ),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    _wait_for(
        lambda: any(
            isinstance(r, Stderr) and r.raw == "byte_server: armed"
            for r in _records_so_far(capture_path)
        )
    )
    return proc


def _records_so_far(path: Path) -> list:
    try:
        return read_records(path)[1]
    except Exception:
        return []


def _wait_for(predicate, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError("condition not met in time")


def test_live_flags_are_recorded_and_printed(tmp_path: Path, capture_path: Path) -> None:
    bad = b'{"jsonrpc":"1.0","id":1,"method":"ping"}\n'
    proc = run(
        mcpeek_argv("stdio", "-w", str(capture_path), "--", *peer_argv("byte_server.py")), stdin=bad
    )
    assert proc.returncode == 0
    flags = [ln for ln in proc.stderr.decode().splitlines() if "jsonrpc.version" in ln]
    assert flags and flags[0].startswith("mcpeek: ERROR jsonrpc.version ping id 1: ")
    assert flags[0].endswith(
        "https://modelcontextprotocol.io/specification/2026-07-28/basic/index#messages"
    )
    _, records, _ = read_records(capture_path)
    (violation,) = [r for r in records if getattr(r, "rule", None) == "jsonrpc.version"]
    msg = next(r for r in records if isinstance(r, Msg))
    assert violation.msgs == [msg.seq] and violation.seq > msg.seq

    quiet = tmp_path / "quiet.jsonl"
    proc = run(
        mcpeek_argv("stdio", "-q", "-w", str(quiet), "--", *peer_argv("byte_server.py")), stdin=bad
    )
    assert proc.stderr == b""  # quiet on stderr, but still recorded
    assert any(getattr(r, "rule", None) == "jsonrpc.version" for r in read_records(quiet)[1])

    unchecked = tmp_path / "unchecked.jsonl"
    proc = run(
        mcpeek_argv(
            "stdio", "--no-check", "-w", str(unchecked), "--", *peer_argv("byte_server.py")
        ),
        stdin=bad,
    )
    assert b"jsonrpc.version" not in proc.stderr
    assert not any(getattr(r, "rule", None) for r in read_records(unchecked)[1])


def test_a_server_that_exits_at_once_while_stdin_stays_open(capture_path: Path) -> None:
    proc = subprocess.Popen(
        mcpeek_argv("stdio", "-w", str(capture_path), "--", "sh", "-c", "exit 4"),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    _, err = proc.communicate(timeout=20)  # stdin is closed only after mcpeek exits
    assert proc.returncode == 4 and b"Traceback" not in err


def test_a_slow_client_still_gets_every_byte(tmp_path: Path, capture_path: Path) -> None:
    send = tmp_path / "send.bin"
    payload = (
        b'{"jsonrpc":"2.0","method":"notifications/message","params":{"p":"' + b"q" * 200 + b'"}}\n'
    ) * 12_000  # ~2.6 MB, more than every pipe buffer
    send.write_bytes(payload)
    proc = subprocess.Popen(
        mcpeek_argv(
            "stdio",
            "-q",
            "-w",
            str(capture_path),
            "--",
            *peer_argv("byte_server.py", "--send", str(send)),
        ),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None
    time.sleep(4)  # the server has long exited; mcpeek must keep what it could not deliver yet
    received = proc.stdout.read()
    proc.wait(timeout=20)
    assert received == payload
    _, records, _ = read_records(capture_path)
    assert stream_bytes(records, "s2c") == payload
    assert [e.event for e in events(records)].count("server-eof") == 1


def test_a_client_that_stops_reading_stdout_stops_the_server(
    tmp_path: Path, capture_path: Path
) -> None:
    flood = "import sys\nwhile True: sys.stdout.write('{}\\n' * 1000)\n"
    proc = subprocess.Popen(
        mcpeek_argv(
            "stdio", "-q", "--no-check", "-w", str(capture_path), "--", sys.executable, "-c", flood
        ),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None
    read = len(proc.stdout.read(100_000))
    proc.stdout.close()  # like `| head -c 100000`, while stdin stays open
    proc.wait(timeout=20)  # the server got EPIPE, as it would have without mcpeek
    assert proc.returncode != 0
    # mcpeek stopped reading the server once the client had gone, rather than draining
    # it into the capture (the flood never ends). What it may have recorded beyond
    # what the client read is what sat between the two: the client's pipe, one read in
    # mcpeek's write buffer, the server's pipe (each at most PIPE_SIZE, mcpeek's widening)
    # and the server's own stdio buffer. Measured on 2 cores: 1.54 MB of the 3.2 MB this
    # allows when idle, 2.3 MB under load: that broke the old bound on the file (50 MB),
    # as a 3-byte message takes 27 bytes of record.
    _, records, _ = read_records(capture_path)
    recorded = len(stream_bytes(records, "s2c"))
    assert recorded <= read + 3 * PIPE_SIZE + CHUNK


def test_a_closed_stdout_never_becomes_the_capture(tmp_path: Path, capture_path: Path) -> None:
    argv = mcpeek_argv("stdio", "-q", "-w", str(capture_path), "--", *peer_argv("byte_server.py"))
    script = (
        "import os, subprocess, sys; os.close(1); "
        f"sys.exit(subprocess.call({argv!r}, stdin=subprocess.DEVNULL))"
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=30)
    assert b"Traceback" not in proc.stderr
    header, _, problems = read_records(capture_path)
    assert problems == [] and header.v == 1


def test_a_full_disk_keeps_the_servers_exit_code(capture_path: Path) -> None:
    # A full disk, honestly: the file may not grow past 4 KiB (RLIMIT_FSIZE; Python
    # ignores SIGXFSZ, so the write fails with EFBIG as it would with ENOSPC).
    proc = subprocess.run(
        mcpeek_argv(
            "stdio", "-w", str(capture_path), "--", *peer_argv("byte_server.py", "--exit", "3")
        ),
        input=b"{}\n" * 5000,
        capture_output=True,
        timeout=60,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096)),
    )
    assert proc.returncode == 3
    assert b"Traceback" not in proc.stderr
    assert proc.stderr.count(b"File too large") == 1  # said once, however many writes failed
    assert f"the capture {capture_path} is incomplete".encode() in proc.stderr
    assert b"recorded in" not in proc.stderr


def test_a_command_line_that_is_not_utf8(tmp_path: Path, capture_path: Path) -> None:
    proc = run(
        [
            *mcpeek_argv("stdio", "-w", str(capture_path), "--"),
            sys.executable,
            os.fsdecode(b"/no/such/\xffserver.py"),
        ]
    )
    assert b"Traceback" not in proc.stderr
    header, _, _ = read_records(capture_path)
    assert header.target[1] == "/no/such/\\xffserver.py"


def test_stdin_from_a_big_file_is_read_as_the_server_reads(
    tmp_path: Path, capture_path: Path
) -> None:
    big = tmp_path / "requests.jsonl"
    big.write_bytes(b'{"jsonrpc":"2.0","method":"notifications/x"}\n' * 400_000)  # 18 MB
    received = tmp_path / "received.bin"
    with big.open("rb") as stdin:
        proc = subprocess.run(
            mcpeek_argv(
                "stdio",
                "-q",
                "--no-check",
                "-w",
                str(capture_path),
                "--",
                *peer_argv("byte_server.py", "--recv-to", str(received)),
            ),
            stdin=stdin,
            capture_output=True,
            timeout=120,
        )
    assert proc.returncode == 0
    assert received.read_bytes() == big.read_bytes()


def test_client_data_after_the_server_closed_its_stdin_is_marked_undelivered(
    capture_path: Path,
) -> None:
    # The server reads 100 bytes, closes its stdin, and exits half a second later; the
    # client never stops sending. (A server that closed its stdin by exiting raced
    # mcpeek: its exit could be seen before any write met the closed pipe.)
    server = ["sh", "-c", "head -c 100 >/dev/null; exec 0<&-; sleep 0.5; exit 4"]
    client = subprocess.Popen(["yes", '{"jsonrpc":"2.0","method":"x"}'], stdout=subprocess.PIPE)
    try:
        proc = subprocess.run(
            mcpeek_argv("stdio", "-w", str(capture_path), "--", *server),
            stdin=client.stdout,
            capture_output=True,
            timeout=60,
        )
    finally:
        client.kill()
        client.wait()
    assert proc.returncode == 4
    assert b"the server's stdin was closed for" in proc.stderr
    _, records, _ = read_records(capture_path)
    notes = [e for e in events(records) if e.event == "note" and "stdin is closed" in e.message]
    assert len(notes) == 1  # said once, where delivery stopped
    sent = [r.seq for r in records if isinstance(r, Msg) and r.dir == "c2s"]
    assert sent[0] < notes[0].seq < sent[-1]
    # mcpeek stopped reading when the server exited: that is no EOF from the client.
    assert "client-eof" not in [e.event for e in events(records)]


def test_a_server_that_writes_at_once_reaches_the_client(capture_path: Path) -> None:
    # Its output is read as soon as it runs: it used to come before mcpeek had
    # connected its own stdout, and was counted as "the client went away".
    hello = b'{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"hi"}}\n'
    ping = b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n'
    script = f"printf '%s\\n' '{hello.decode().strip()}'; exec cat"
    for _ in range(3):  # (a race, lost every time before)
        capture_path.unlink(missing_ok=True)
        argv = mcpeek_argv("stdio", "-q", "--no-check", "-w", str(capture_path), "--")
        proc = run([*argv, "sh", "-c", script], stdin=ping)
        assert proc.returncode == 0, proc.stderr.decode()
        assert proc.stdout == hello + ping
        assert b"went away" not in proc.stderr
        _, records, _ = read_records(capture_path)
        assert stream_bytes(records, "s2c") == hello + ping


def test_a_sigterm_as_the_server_starts_is_forwarded_to_it(capture_path: Path) -> None:
    # The signal handlers used to be installed only once both of the client's pipes
    # were connected: a SIGTERM just after the spawn killed mcpeek and left the
    # server (in its own process group) running.
    sleeper = [sys.executable, "-c", "import time; time.sleep(30)"]
    for _ in range(3):  # (a race, lost about every other time before)
        capture_path.unlink(missing_ok=True)
        proc = subprocess.Popen(
            [*mcpeek_argv("stdio", "-q", "--no-check", "-w", str(capture_path), "--"), *sleeper],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        deadline = time.monotonic() + 20
        while not (capture_path.exists() and b'"spawn"' in capture_path.read_bytes()):
            assert time.monotonic() < deadline, "no spawn event"
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=20)
        assert proc.returncode == 128 + signal.SIGTERM, err.decode()
        _, records, _ = read_records(capture_path)
        (spawn,) = [e for e in events(records) if e.event == "spawn"]
        exits = [e for e in events(records) if e.event == "exit"]
        assert [e.signal for e in exits] == [signal.SIGTERM]  # the server died of it
        assert spawn.pid is not None
        with pytest.raises(ProcessLookupError):
            os.kill(spawn.pid, 0)


def test_an_unfinished_line_from_a_stdin_file_is_recorded_when_the_server_exits(
    tmp_path: Path, capture_path: Path
) -> None:
    # As from a pipe: the part of the line mcpeek read is recorded, marked partial.
    # From a file it was left out (the file's reader never said that reading ended).
    requests = tmp_path / "requests.jsonl"
    ping = b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n'
    requests.write_bytes(ping + b'{"big":"' + b"y" * (8 << 20) + b'"')
    server = (
        "import os\n"
        "got = b''\n"
        "while b'\\n' not in got: got += os.read(0, 1)\n"
        "n = 0\n"
        "while n < 500_000: n += len(os.read(0, 500_000 - n))\n"
        'os.write(1, b\'{"jsonrpc":"2.0","id":1,"result":{}}\\n\')\n'
    )
    argv = mcpeek_argv("stdio", "-q", "--no-check", "-w", str(capture_path), "--")
    with requests.open("rb") as stdin:
        proc = subprocess.run(
            [*argv, sys.executable, "-c", server], stdin=stdin, capture_output=True, timeout=60
        )
    assert proc.returncode == 0, proc.stderr.decode()
    _, records, _ = read_records(capture_path)
    sent = [r for r in records if isinstance(r, Msg) and r.dir == "c2s"]
    assert [bool(m.partial) for m in sent] == [False, True]
    partial = stream_bytes(records, "c2s")[len(ping) :]
    assert len(partial) >= 500_000 - len(ping) and requests.read_bytes().startswith(ping + partial)
