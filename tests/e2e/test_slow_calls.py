"""A hung call, live: the real SDK client and server through ``mcpeek stdio -w``,
followed by ``mcpeek show --follow --slow 0.5``, which prints a line for the
call as soon as it has been in flight half a second, before it is answered.

The server's get_weather is held until the test creates a release file, so the
call stays in flight exactly as long as the test needs: the test waits for the
slow line (an event), then releases the call and checks the order of the lines.
"""

from __future__ import annotations

import json
import queue
import subprocess
import threading
import time
from pathlib import Path
from typing import IO

import pytest

from tests.conftest import mcpeek_argv, peer_argv

pytestmark = pytest.mark.e2e

SAFETY_S = 60  # a hang fails the test instead of blocking the suite (not a timing assert)


def _lines(stream: IO[str], into: queue.Queue[str | None]) -> None:
    for line in stream:
        into.put(line.rstrip("\n"))
    into.put(None)


def _until(lines: queue.Queue[str | None], wanted: str, seen: list[str]) -> None:
    """Read ``lines`` into ``seen`` until one contains ``wanted``."""
    while True:
        line = lines.get(timeout=SAFETY_S)
        assert line is not None, f"show ended without {wanted!r}: {seen}"
        seen.append(line)
        if wanted in line:
            return


@pytest.mark.parametrize("era", ["modern", "legacy"])
@pytest.mark.parametrize("fmt", ["text", "json"])
def test_show_follow_prints_a_line_when_a_call_passes_slow(
    era: str, fmt: str, tmp_path: Path
) -> None:
    capture = tmp_path / "live.jsonl"
    release = tmp_path / "release"
    server = peer_argv("sdk_server.py", "--hold-weather", str(release))
    proxy = mcpeek_argv("stdio", "-w", str(capture), "--", *server)
    client = subprocess.Popen(
        peer_argv("sdk_client.py", "--era", era, "--", *proxy),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    show: subprocess.Popen[str] | None = None
    try:
        # The capture exists once the proxy has started (its header is written first).
        while not capture.exists():
            assert client.poll() is None, client.communicate()[1].decode()[-3000:]
            time.sleep(0.05)  # (polling for the file, not timing anything)
        show = subprocess.Popen(
            mcpeek_argv("show", "--follow", "--slow", "0.5", "--format", fmt, str(capture)),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        lines: queue.Queue[str | None] = queue.Queue()
        assert show.stdout is not None
        threading.Thread(target=_lines, args=(show.stdout, lines), daemon=True).start()
        seen: list[str] = []
        slow_mark = "(slow: no answer after" if fmt == "text" else '"pending_ms"'
        while True:  # other calls may be slow too on a loaded machine: wait for get_weather's
            _until(lines, slow_mark, seen)
            if "get_weather" in seen[-1]:
                break
        # Still held: the call cannot have been answered, so its slow line came first.
        assert not any("get_weather" in line and "complete" in line for line in seen)
        release.touch()
        out, err = client.communicate(timeout=SAFETY_S)
        assert client.returncode == 0, err.decode()[-3000:]
        assert json.loads(out)["weather"] == "Sunny in Paris"
        _until(lines, "get_weather", seen)  # its usual line, once answered
        assert show.wait(timeout=SAFETY_S) == 0, show.stderr.read() if show.stderr else ""
    finally:
        for proc in (client, show):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait()
    slow_line, done_line = [line for line in seen if "get_weather" in line]
    if fmt == "text":
        assert "← pending" in slow_line and "(slow: no answer after 0." in slow_line
        assert "← complete" in done_line and "slow" not in done_line
    else:
        slow = json.loads(slow_line)
        assert slow["status"] == "pending" and slow["name"] == "get_weather"
        assert slow["pending_ms"] >= 500 and slow["latency_ms"] is None
        done = json.loads(done_line)
        assert done["status"] == "complete" and "pending_ms" not in done
        assert done["flow"] == slow["flow"]
