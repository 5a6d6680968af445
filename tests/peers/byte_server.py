"""A stdio "server" that misbehaves on purpose, for the relay's byte-exactness tests.

It speaks no MCP: it writes the exact bytes of ``--send FILE`` to stdout in
chunks of varying size (interleaving ``--stderr-lines`` lines on stderr),
saves every byte it reads from stdin to ``--recv-to FILE``, and can crash or
refuse to die in the ways a real server does:

- ``--exit N``: exit code once both directions are done;
- ``--kill-self-after BYTES``: SIGKILL itself once it has written that much;
- ``--ignore-term``: ignore SIGTERM and keep running after stdin's EOF;
- ``--on-term-exit N``: on SIGTERM/SIGINT, say so on stderr and exit N;
- ``--no-read``: never read stdin (to test back-pressure).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import time
from pathlib import Path


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--send")
    parser.add_argument("--recv-to")
    parser.add_argument("--stderr-lines", type=int, default=0)
    parser.add_argument("--exit", type=int, default=0)
    parser.add_argument("--kill-self-after", type=int)
    parser.add_argument("--ignore-term", action="store_true")
    parser.add_argument("--on-term-exit", type=int)
    parser.add_argument("--no-read", action="store_true")
    parser.add_argument("--linger", type=float, default=0.0, help="seconds to stay after EOF")
    args = parser.parse_args()

    if args.ignore_term:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        write_all(2, b"byte_server: armed\n")  # tests wait for this before closing stdin
    if args.on_term_exit is not None:

        def on_term(signum: int, _frame: object) -> None:
            write_all(2, f"byte_server: got {signal.Signals(signum).name}\n".encode())
            os._exit(args.on_term_exit)

        signal.signal(signal.SIGTERM, on_term)
        signal.signal(signal.SIGINT, on_term)
        write_all(2, b"byte_server: armed\n")  # tests wait for this before signalling

    def receive() -> None:
        with open(args.recv_to or os.devnull, "wb") as sink:
            while chunk := os.read(0, 1 << 16):
                sink.write(chunk)
                sink.flush()

    reader = threading.Thread(target=receive, daemon=True)
    if not args.no_read:
        reader.start()

    payload = Path(args.send).read_bytes() if args.send else b""
    sizes = [1, 7, 4096, 65536, 3, 1 << 20]
    offset = written_since_err = 0
    step = 0
    err_lines = 0
    while offset < len(payload):
        size = sizes[step % len(sizes)]
        step += 1
        write_all(1, payload[offset : offset + size])
        offset += size
        written_since_err += size
        if args.kill_self_after is not None and offset >= args.kill_self_after:
            time.sleep(0.2)  # let the relay forward what was written
            os.kill(os.getpid(), signal.SIGKILL)
        if err_lines < args.stderr_lines and written_since_err > 1000:
            write_all(2, f"byte_server: progress {offset}\n".encode())
            err_lines += 1
            written_since_err = 0
    while err_lines < args.stderr_lines:
        write_all(2, f"byte_server: line {err_lines}\n".encode())
        err_lines += 1

    if not args.no_read:
        reader.join()
    if args.ignore_term or args.on_term_exit is not None:
        while True:
            time.sleep(1)
    time.sleep(args.linger)
    sys.stdout.flush()
    return args.exit


if __name__ == "__main__":
    raise SystemExit(main())
