"""A byte-exact stdio tee: ``python -m mcpeek.inspector.testing.tee --in-log A --out-log B -- CMD``.

Spawns CMD and copies its own stdin to CMD's stdin (and to file A) and CMD's
stdout to its own stdout (and to file B); stderr is inherited. Exits with
CMD's exit code. Used to learn what a client or server really wrote, to
compare with what mcpeek recorded.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import threading
from typing import BinaryIO

CHUNK = 1 << 16


def _pump(src_fd: int, dst_fd: int | None, log: BinaryIO, close_dst: bool) -> None:
    while True:
        try:
            chunk = os.read(src_fd, CHUNK)
        except OSError:
            chunk = b""
        if not chunk:
            break
        log.write(chunk)
        log.flush()
        if dst_fd is not None:
            view = memoryview(chunk)
            try:
                while view:
                    view = view[os.write(dst_fd, view) :]
            except OSError:
                dst_fd = None  # the reader went away; keep logging what arrives
    if close_dst and dst_fd is not None:
        os.close(dst_fd)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tee")
    parser.add_argument("--in-log", required=True)
    parser.add_argument("--out-log", required=True)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert child.stdin is not None and child.stdout is not None
    with open(args.in_log, "wb") as in_log, open(args.out_log, "wb") as out_log:
        to_child = threading.Thread(
            target=_pump, args=(0, child.stdin.fileno(), in_log, True), daemon=True
        )
        from_child = threading.Thread(target=_pump, args=(child.stdout.fileno(), 1, out_log, False))
        to_child.start()
        from_child.start()
        from_child.join()
        code = child.wait()
        # stdin may never reach EOF (the client waits for us): don't join it.
    sys.stdout.flush()
    return code


if __name__ == "__main__":
    raise SystemExit(main())
