"""A minimal newline-delimited JSON-RPC echo server for the relay benchmark.

Reads stdin line by line as bytes and answers each request line with a
response line of exactly the same length::

    {"jsonrpc":"2.0","id":<same id>,"result":{"pad":"yyyy…"}}\\n

The id is cut out of the request with byte searches (no JSON parsing), so the
server costs the same per byte whether it sits behind mcpeek or not. Output
is flushed after a line whenever the stdin pipe has no more data waiting, so
pipelined requests are answered in batches and a lone request is answered at
once. It does exactly the same thing in the direct and the proxied runs.
"""

from __future__ import annotations

import os
import select
import sys

ID_KEY = b'"id":'
HEAD = b'{"jsonrpc":"2.0","id":'
MID = b',"result":{"pad":"'
TAIL = b'"}}\n'
FIXED = len(HEAD) + len(MID) + len(TAIL)


def main() -> int:
    stdin = os.fdopen(sys.stdin.fileno(), "rb", buffering=1 << 16, closefd=False)
    stdout = os.fdopen(sys.stdout.fileno(), "wb", buffering=1 << 16, closefd=False)
    poller = select.poll()
    poller.register(stdin.fileno(), select.POLLIN)
    pads: dict[int, bytes] = {}
    readline = stdin.readline
    write = stdout.write
    poll = poller.poll
    while True:
        line = readline()
        if not line:
            break
        start = line.find(ID_KEY)
        if start < 0:
            continue  # a notification or junk: nothing to answer
        start += len(ID_KEY)
        end = line.find(b",", start)
        ident = line[start:end]
        n = len(line) - FIXED - len(ident)
        if not line.endswith(b"\n"):
            n += 1  # unterminated last line: keep the size, add the newline
        pad = pads.get(n)
        if pad is None:
            pad = pads[n] = b"y" * max(n, 0)
        write(b"".join((HEAD, ident, MID, pad, TAIL)))
        if not poll(0):
            stdout.flush()
    stdout.flush()
    return 0


if __name__ == "__main__":
    try:
        raise SystemExit(main())
    except (BrokenPipeError, KeyboardInterrupt):
        raise SystemExit(1) from None
