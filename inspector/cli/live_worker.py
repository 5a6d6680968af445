"""The live-checks worker: ``python -m mcpeek.inspector.cli.live_worker CAPTURE [OPTIONS]``.

A proxy starts one worker beside itself. The worker follows the capture the
proxy is writing (the capture file is the bus), runs the same Analyzer and
rules as ``lint``, and writes one JSON line per finding to its stdout, which
the proxy reads: ``{"flow": "<text line>"}`` or ``{"violation": {...}}``. The
proxy appends the violations to the capture and prints the lines on stderr.

Running the analysis in its own process keeps it off the relay's path: a
burst of traffic costs the worker time, never the relayed bytes, and the
worker's backlog lives in the file, not in memory. The worker stops when its
stdin reaches EOF (the proxy is done) and it has read the whole capture; it
ignores SIGINT, which a terminal sends to the whole process group, and runs
at a lower CPU priority than the relay.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import threading
from typing import BinaryIO

import msgspec

from mcpeek.inspector import gctune
from mcpeek.inspector.analysis import AnalysisListener, Analyzer
from mcpeek.inspector.analysis.guarded import GuardedAnalyzer
from mcpeek.inspector.capture.reader import CaptureError, CaptureReader
from mcpeek.inspector.records import Violation
from mcpeek.inspector.views.flowline import FlowPrinter


def main(argv: list[str] | None = None) -> int:
    gctune.for_this_process()
    parser = argparse.ArgumentParser(prog="mcpeek-live-worker")
    parser.add_argument("capture")
    parser.add_argument("--flows", action="store_true")
    parser.add_argument("--no-check", action="store_true")
    parser.add_argument("--spec")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # Below the relay, the client and the server: under load the analysis lags
    # (its backlog is the capture file), the traffic does not.
    with contextlib.suppress(OSError, AttributeError):
        os.nice(10)
    out: BinaryIO = sys.stdout.buffer
    encoder = msgspec.json.Encoder()

    def send(item: dict[str, object]) -> None:
        out.write(encoder.encode(item) + b"\n")
        out.flush()

    listeners: list[AnalysisListener] = []
    if args.flows:
        listeners.append(FlowPrinter(lambda line: send({"flow": line})))
    if not args.no_check:
        from mcpeek.rules.engine import RuleEngine

        listeners.append(
            RuleEngine(lambda v: send({"violation": msgspec.to_builtins(v)}), spec=args.spec)
        )
    analyzer = Analyzer(listeners)
    proxy_done = threading.Event()

    def wait_for_eof() -> None:
        sys.stdin.buffer.read()
        proxy_done.set()

    threading.Thread(target=wait_for_eof, daemon=True).start()
    reader = CaptureReader(args.capture)
    checks = GuardedAnalyzer(
        analyzer,
        "the live checks",
        "they go on, run mcpeek lint on the capture to check it again",
    )
    try:
        for record in reader.records(follow=True, stop=proxy_done.is_set, poll_interval=0.02):
            if analyzer.header is None and reader.header is not None:
                checks.feed(reader.header)
            if not isinstance(record, Violation):  # the proxy's, from our own findings
                checks.feed(record)
        checks.finish()
    except (CaptureError, BrokenPipeError) as exc:
        print(f"mcpeek: live checks stopped: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
