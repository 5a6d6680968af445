#!/usr/bin/env python3
"""What recording costs the relays, step by step, in CPU time (no network, no worker).

    python tests/bench/recording_cost.py [--rounds N]

A plain script, not a test: it prints figures and asserts nothing about
timing. Each figure is the best of ``--rounds`` batches (the least disturbed
by other work on the machine) of process CPU time:

* one HTTP exchange as the relay emits it (request record, its message, the
  response record, the response message with the end record: five records in
  four emits), through a redacting :class:`CaptureWriter`;
* one 100-byte stdio message (with a run of token characters, as the stdio
  benchmark's padding makes) through the same writer: the same one again and
  again (as the stdio benchmark sends them, but for their ids), and each one
  new (nothing the redactor remembers helps);
* the SSE parser, per small event, for LF and CRLF streams of 50 events a chunk;
* one 16 MB JSON message through the writer.

For figures that do not move with the load, run the same under valgrind's
callgrind (instruction counts), e.g. ``PYTHONHASHSEED=0 valgrind
--tool=callgrind python tests/bench/recording_cost.py --rounds 1``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from multidict import CIMultiDict, istr

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT))

from mcpeek.inspector.capture.writer import CaptureWriter  # noqa: E402
from mcpeek.inspector.proxy.sse import SseParser  # noqa: E402
from mcpeek.inspector.records import Http, Msg, text_fields  # noqa: E402

# As a 2026-07-28 client sends it: its _meta names the version, capabilities and client.
REQUEST = (
    '{"jsonrpc":"2.0","id":17,"method":"tools/call","params":{"name":"get_weather",'
    '"arguments":{"city":"Paris"},"_meta":{"io.modelcontextprotocol/protocolVersion":'
    '"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},'
    '"io.modelcontextprotocol/clientInfo":{"name":"bench-client","version":"1.0"},'
    '"progressToken":17}}}'
)
RESULT = (
    '{"jsonrpc":"2.0","id":17,"result":{"resultType":"complete","content":[{"type":"text",'
    '"text":"Sunny, 21 C"}],"isError":false,"_meta":{"io.modelcontextprotocol/serverInfo":'
    '{"name":"bench-upstream","version":"1.0"}}}}'
)
PADDED = '{"jsonrpc":"2.0","id":1234,"method":"bench/echo","params":{"pad":"' + "x" * 40 + '"}}'
# Letters for digits, none of which makes a plugin's literal ("gh", "xox"...).
LETTERS = "bcdfjmnqrv"


def padded_anew(i: int) -> str:
    """PADDED with a pad no earlier call made (its key is new: nothing remembered helps)."""
    pad = "x" * 30 + "".join(LETTERS[int(d)] for d in f"{i:010d}")
    return PADDED.replace("x" * 40, pad)


REQUEST_HEADERS = CIMultiDict(
    [
        (istr("Host"), "127.0.0.1:4444"),
        (istr("Content-Type"), "application/json"),
        (istr("Accept"), "application/json, text/event-stream"),
        (istr("Mcp-Protocol-Version"), "2026-07-28"),
        (istr("Content-Length"), "140"),
        (istr("User-Agent"), "Python/3.11 aiohttp/3.14"),
    ]
)
RESPONSE_HEADERS = CIMultiDict(
    [
        (istr("Content-Type"), "application/json; charset=utf-8"),
        (istr("Content-Length"), "210"),
        (istr("Date"), "Wed, 02 Dec 2026 04:20:02 GMT"),
        (istr("Server"), "Python/3.11 aiohttp/3.14"),
    ]
)
PROGRESS = (
    b'data: {"jsonrpc":"2.0","method":"notifications/progress","params":'
    b'{"progressToken":1,"progress":1,"total":2,"message":"halfway"}}'
)


def best(rounds: int, batch: int, step: Callable[[int], None]) -> float:
    """Seconds of CPU per call of ``step``: the best batch of ``rounds``."""
    fastest = float("inf")
    for _ in range(rounds):
        start = time.process_time()
        for i in range(batch):
            step(i)
        fastest = min(fastest, time.process_time() - start)
    return fastest / batch


def feeding(parser: SseParser, chunk: bytes) -> Callable[[int], None]:
    def feed(i: int) -> None:
        parser.feed(chunk)

    return feed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=30, help="batches per figure (30)")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    print(f"recording cost; python {sys.version.split()[0]}, load average {load:.2f}")
    with tempfile.TemporaryDirectory(prefix="mcpeek-bench-") as tmp:
        writer = CaptureWriter(Path(tmp) / "c.jsonl", transport="http", target="bench")
        assert writer._redactor is not None
        _ = writer._redactor.detector  # built before the clock starts

        def exchange(i: int) -> None:
            x = f"x{i}"
            request = Http(x=x, phase="request", method="POST", path="/mcp")
            request.headers = list(REQUEST_HEADERS.items())
            writer.write_many([request])
            writer.write_many([Msg(dir="c2s", ch=x, raw=REQUEST)])
            response = Http(x=x, phase="response", status=200)
            response.headers = list(RESPONSE_HEADERS.items())
            writer.write_many([response])
            end = Http(x=x, phase="end", reason="complete")
            writer.write_many([Msg(dir="s2c", ch=x, raw=RESULT), end])

        per = best(args.rounds, 200, exchange)
        print(f"  HTTP exchange (5 records, 4 emits)   {per * 1e6:8.1f} us CPU")
        per = best(
            args.rounds, 1000, lambda i: writer.write_many([Msg(dir="c2s", ch="stdio", raw=PADDED)])
        )
        print(f"  stdio 100-byte message, repeated     {per * 1e6:8.2f} us CPU")
        per = best(
            args.rounds,
            1000,
            lambda i: writer.write_many([Msg(dir="c2s", ch="stdio", raw=padded_anew(i))]),
        )
        print(f"  stdio 100-byte message, each new     {per * 1e6:8.2f} us CPU")
        for name, eol in (("LF", b"\n"), ("CRLF", b"\r\n")):
            chunk = (b"event: message" + eol + PROGRESS + eol + eol) * 50
            per = best(args.rounds, 100, feeding(SseParser(), chunk)) / 50
            print(f"  SSE parser, small event, {name:4}        {per * 1e9:8.0f} ns CPU")
        text = '{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"'
        big = text.encode() + b"y" * (16 << 20) + b'"}]}}'

        def record_big(i: int) -> None:
            raw, raw_b64 = text_fields(big)
            writer.write_many([Msg(dir="s2c", ch="x1", raw=raw, raw_b64=raw_b64)])

        per = best(min(args.rounds, 5), 1, record_big)
        print(f"  16 MB JSON message                   {per * 1e3:8.1f} ms CPU")
        writer.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
