"""The proxies' memory over long streams of small messages: flat (issue #16).

Each test runs ``mcpeek`` in a process of its own (live checks off) in front
of a small peer, relays 200k small messages and compares its resident memory
(``VmRSS``) after the first 50k, all recorded, with that at the end. Memory,
not time: nothing here depends on how fast the machine is.
"""

from __future__ import annotations

import subprocess
import threading
import urllib.request
from http.server import BaseHTTPRequestHandler
from pathlib import Path

from tests.inspector.proxy.rss_harness import (
    WAIT_S,
    complete_lines,
    http_proxy,
    message,
    resident_mb,
    stdio_proxy,
    wait_for,
)

# 200k small messages, RSS looked at after the first 50k and at the end.
FIRST, MORE = 50_000, 150_000
GROWTH_MB = 3.0  # what allocator noise may add; 20 bytes kept per message is more


def test_stdio_a_long_stream_of_small_messages_does_not_grow_it(
    tmp_path: Path,
) -> None:
    capture = tmp_path / "c.jsonl"
    with stdio_proxy(capture) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        sent = 0

        def relay(count: int) -> float:
            """``count`` more requests each way, all recorded; mcpeek's RSS then."""
            nonlocal sent
            batch = b"".join(message(sent + i, "method", 100) + b"\n" for i in range(count))
            writer = threading.Thread(target=proc.stdin.write, args=(batch,), daemon=True)
            writer.start()
            got = 0
            while got < len(batch):
                got += len(proc.stdout.read1(1 << 20))
            writer.join()
            sent += count
            wait_for(lambda: complete_lines(capture) >= 2 + 2 * sent, "every message recorded")
            return resident_mb(proc.pid)

        relay(1000)  # warm: the redactor, the buffers, the pipes at their size
        early = relay(FIRST // 2)  # requests, each echoed: two messages
        # The rest in batches of the same size: one batch three times as big left
        # up to 3.5 MB more of the transient buffers of its burst resident, on the
        # code of before as well (1 run in 3), where equal batches stay flat.
        for _ in range(MORE // FIRST):
            late = relay(FIRST // 2)
    assert late - early <= GROWTH_MB, f"RSS grew {early:.1f} -> {late:.1f} MB"


class _Events(BaseHTTPRequestHandler):
    """Answers a POST to ``/mcp?n=N`` with N small SSE events (progress notifications)."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        n = int(self.path.rsplit("=", 1)[1])
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()  # no length: the body ends when the connection does
        event = (
            b'event: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress",'
            b'"params":{"progressToken":1,"progress":%d}}\n\n'
        )
        for start in range(0, n, 1000):
            self.wfile.write(b"".join(event % i for i in range(start, min(n, start + 1000))))

    def log_message(self, *args: object) -> None:
        pass


def test_http_a_long_stream_of_small_events_does_not_grow_it(tmp_path: Path) -> None:
    capture = tmp_path / "c.jsonl"
    recorded = 2  # header, listen

    def stream(proc: subprocess.Popen[bytes], port: int, n: int) -> float:
        """One request answered by ``n`` events, all recorded; mcpeek's RSS then."""
        nonlocal recorded
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/mcp?n={n}",
            data=message(1, "method", 100),
            headers={"Content-Type": "application/json", "Accept": "text/event-stream"},
        )
        with urllib.request.urlopen(request, timeout=WAIT_S) as response:
            assert response.read().count(b"\n\n") == n
        recorded += 4 + n  # request, c2s, response, the events, end
        wait_for(lambda: complete_lines(capture) >= recorded, "every event recorded")
        return resident_mb(proc.pid)

    with http_proxy(_Events, capture) as (proc, port):
        stream(proc, port, 1000)  # warm
        early = stream(proc, port, FIRST)
        late = stream(proc, port, MORE)
    assert late - early <= GROWTH_MB, f"RSS grew {early:.1f} -> {late:.1f} MB"
