"""The live-checks worker: ``python -m mcpeek.inspector.cli.live_worker CAPTURE [OPTIONS]``.

A proxy starts one worker beside itself. The worker follows the capture the
proxy is writing (the capture file is the bus), runs the same Analyzer and
rules as ``lint`` (through the same loop, :func:`run_capture`), and writes
one JSON line per finding to its stdout, which the proxy reads: a flow line or
a violation, typed messages of :mod:`mcpeek.inspector.cli.live_protocol`. The
proxy appends the violations to the capture and prints the lines on stderr.
While it waits for more traffic, the analysis's clock ticks, so that a
request left unanswered is flagged while the session runs.

Running the analysis in its own process keeps it off the relay's path: a
burst of traffic costs the worker time, never the relayed bytes, and the
worker's backlog lives in the file, not in memory. It ignores SIGINT, which a
terminal sends to the whole process group, and runs at a lower CPU priority
than the relay.

The proxy steers it with lines on its stdin (:class:`ProxyCommands`):
``done`` (the traffic is over: read the capture to its end, finish), ``stop``
(stop at once: the proxy will not wait), ``cut`` (a write failed, the capture
stops short: read it to its end, but judge nothing by what it lacks: no clock
ticks, no end of session, so no request is called unanswered because its
answer, which the client got, could not be written). Either way the worker ends with
:class:`Checked`, the number of records it checked. Its first line,
:class:`Ready`, says it runs. EOF on stdin without ``done`` means the
proxy is gone (killed): the worker stops without a word, as it does when its
stdout breaks; nobody is left to read it, and the client's stderr is no
place for noise.
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

from mcpeek.inspector import gctune, memtune
from mcpeek.inspector.analysis import NOTIFICATION_WINDOW, AnalysisListener, Analyzer
from mcpeek.inspector.analysis.guarded import GuardedAnalyzer
from mcpeek.inspector.capture.polling import Polling
from mcpeek.inspector.capture.reader import CaptureError, CaptureReader
from mcpeek.inspector.capture.run import Analysis, run_capture
from mcpeek.inspector.cli.live import CUT, DONE, STOP
from mcpeek.inspector.cli.live_protocol import Checked, FlowLine, Found, Ready, WorkerLine
from mcpeek.inspector.records import Header, Record, Violation
from mcpeek.inspector.views.flowline import FlowPrinter
from mcpeek.inspector.views.in_flight import DEFAULT_SLOW, InFlight, SlowCalls

# Seconds between looks at the capture: while traffic comes, and at most once it
# stopped (an idle session's worker wakes 4 times a second, not 50; a hung call's
# flag and the clock's ticks come at most that late).
POLL_SHORTEST = 0.02
POLL_LONGEST = 0.25


class ProxyCommands:
    """What the proxy said on our stdin, read in a thread."""

    def __init__(self) -> None:
        self.done = threading.Event()  # stop following once the end is read
        self.stop = threading.Event()  # stop now
        self.cut = threading.Event()  # the capture stops short: no judging by its end
        # Set with done or stop: cuts short a wait between looks at the capture.
        self.told = threading.Event()
        self.gone = False  # EOF without "done": the proxy died

    def listen(self, source: BinaryIO) -> None:
        # Unbuffered reads (``raw``): a daemon thread blocked in a buffered read
        # holds its lock, and Python aborts at exit ("Fatal Python error").
        raw = getattr(source, "raw", source)
        said = b""
        while True:
            try:
                chunk = raw.read(64)
            except (OSError, ValueError):
                chunk = b""
            if not chunk:
                break
            said += chunk
            if STOP in said:
                self.stop.set()
            if CUT in said:
                self.cut.set()
            if DONE in said:
                self.done.set()
            if self.stop.is_set() or self.done.is_set():
                self.told.set()
        if not self.done.is_set():
            self.gone = True
            self.stop.set()
        self.done.set()
        self.told.set()


def main(argv: list[str] | None = None) -> int:
    gctune.for_this_process()
    memtune.return_big_blocks()
    parser = argparse.ArgumentParser(prog="mcpeek-live-worker")
    parser.add_argument("capture")
    parser.add_argument("--renamed-to", help="the capture's name once it replaced another")
    parser.add_argument("--flows", action="store_true")
    parser.add_argument("--no-check", action="store_true")
    parser.add_argument("--spec")
    parser.add_argument("--slow", type=float, default=DEFAULT_SLOW)
    args = parser.parse_args(argv)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    with contextlib.suppress(OSError, AttributeError):
        os.nice(10)  # below the traffic from the start; further once ready (below_the_traffic)
    try:
        return _check(args)
    except BrokenPipeError:
        _silence_stdout()
        return 0


def below_the_traffic() -> None:
    """Run below the relay, the client and the server: under load the analysis lags
    (its backlog is the capture file), the traffic does not. In Linux's idle
    scheduling class the worker runs on the cores nothing else wants, and a relay,
    client or server that wakes takes the core at once; at nice 10 alone it kept
    its turn a while. In paired rounds of ``tests/bench/http_relay.py``,
    mcpeek/plain went from 0.69-0.75x to 0.80-0.88x (JSON, 32 connections) and
    from 0.77x to 0.83x (SSE, 8); nice 19 in the batch class gave 0.75-0.80x and
    0.81x. The price: on a machine whose every core stays busy, the checks wait
    until one is free (called once the imports are done, so that the worker
    starts as quickly as before)."""
    with contextlib.suppress(OSError, AttributeError):
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))


class _ProxyTraffic:
    """The analysis, fed the proxy's traffic only: the ``violation`` records in the
    capture are the proxy's, written from our own findings."""

    def __init__(self, checks: Analysis, guard: GuardedAnalyzer, cut: threading.Event) -> None:
        self._checks = checks  # the analysis: ``guard``, or flow lines' SlowCalls around it
        # Records go straight to the guard, past SlowCalls, which only passes them on
        # (its work is in tick): a call less on every record.
        self._feed = guard.feed  # (looked up once: called on every record)
        self._cut = cut  # once set, time and the end say nothing about missing answers
        self.checked = 0  # records checked, the header and the violations aside

    def feed(self, record: Record) -> None:
        kind = type(record)
        if kind is Violation:
            return
        self._feed(record)
        if kind is not Header:
            self.checked += 1

    def tick(self, now: float) -> None:
        if not self._cut.is_set():
            self._checks.tick(now)

    def finish(self) -> None:
        if not self._cut.is_set():
            self._checks.finish()


def _check(args: argparse.Namespace) -> int:
    out: BinaryIO = sys.stdout.buffer
    encoder = msgspec.json.Encoder()

    def send(item: WorkerLine) -> None:
        out.write(encoder.encode(item) + b"\n")
        out.flush()

    listeners: list[AnalysisListener] = []
    printer: FlowPrinter | None = None
    in_flight = InFlight()
    if args.flows:
        printer = FlowPrinter(lambda line: send(FlowLine(line)))
        listeners += [printer, in_flight]
    if not args.no_check:
        from mcpeek.rules.engine import RuleEngine

        listeners.append(RuleEngine(lambda v: send(Found(v)), spec=args.spec))
    proxy = ProxyCommands()
    threading.Thread(target=proxy.listen, args=(sys.stdin.buffer,), daemon=True).start()
    guard = GuardedAnalyzer(
        Analyzer(listeners, notification_window=NOTIFICATION_WINDOW),
        "the live checks",
        "they go on, run mcpeek lint on the capture to check it again",
    )
    checks: Analysis = guard
    if printer is not None:  # flow lines: a hung call gets one while it hangs
        checks = SlowCalls(checks, in_flight, args.slow, printer.slow)
    traffic = _ProxyTraffic(checks, guard, proxy.cut)
    below_the_traffic()  # (the imports done at nice 10: a quick start, a quick finish)
    send(Ready())
    try:
        # Following ends when the proxy says "done" (after the end is read) or
        # "stop" (at once, unfinished: end-of-session rules judge a whole session
        # only); not at an exit event, after which an HTTP proxy may still write.
        run_capture(
            CaptureReader(args.capture, renamed_to=args.renamed_to),
            traffic,
            follow=True,
            until_exit=False,
            stop=proxy.done.is_set,
            cancelled=proxy.stop.is_set,
            poll_interval=Polling(POLL_SHORTEST, POLL_LONGEST, proxy.told.wait),
        )
    except CaptureError as exc:
        if not proxy.gone:
            print(f"mcpeek: live checks stopped: {exc}", file=sys.stderr)
        return 1
    if proxy.gone:
        return 0
    send(Checked(traffic.checked))
    return 0


def _silence_stdout() -> None:
    """Our reader is gone: what is still buffered for it must not fail again, noisily,
    when Python flushes stdout at exit."""
    with contextlib.suppress(OSError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


if __name__ == "__main__":
    raise SystemExit(main())
