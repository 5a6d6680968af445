"""``mcpeek demo [--headless] [-w FILE]``: a live MCP session through mcpeek, no set-up.

A scripted client talks to a small bundled MCP server (2026-07-28, stdio)
through the real ``mcpeek stdio`` proxy, for a few seconds: discovery, tools,
a call with progress notifications, a multi round-trip elicitation, a resource
subscription and its event, a cancelled call. The server breaks two rules on
purpose (``tools.output-schema`` and ``result.result-type-missing``), so there
is something to flag.

By default the terminal UI opens on the capture and shows the conversation as
it arrives (quit with q). ``--headless`` prints the flows as they end, then
the violations (as ``mcpeek lint`` does), and exits 0. Either way the capture
stays, in a temporary file unless ``-w`` names one; its path is printed at the
end, after Ctrl-C too (exit 130).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import TextIO

from mcpeek.inspector.analysis import AnalysisListener, Analyzer, Conversation
from mcpeek.inspector.capture.files import CaptureFileError, open_for_writing
from mcpeek.inspector.capture.reader import CaptureError, CaptureReader
from mcpeek.inspector.capture.run import run_capture
from mcpeek.inspector.cli.base import Command, UsageError, on_a_terminal
from mcpeek.inspector.demo.client import DEFAULT_DELAY, DemoClient, DemoError, play, proxy_command
from mcpeek.inspector.records import Record, Stderr
from mcpeek.inspector.views.flowline import FlowPrinter, clock

DEMO_FAILED = 1
START_TIMEOUT = 20.0  # seconds for mcpeek to start writing the capture
INTRO = (
    "mcpeek demo: a scripted MCP client and a small MCP server (2026-07-28) "
    "talk through mcpeek stdio"
)


class DemoCommand(Command):
    name = "demo"
    order = 80
    help = "a live MCP session through mcpeek, with two deliberate violations (no set-up)"
    description = __doc__ or ""

    def configure(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "--headless",
            action="store_true",
            help="print the flows and the violations instead of opening the terminal UI",
        )
        parser.add_argument(
            "-w",
            "--write",
            metavar="FILE",
            type=Path,
            help="capture file to write (default: a new temporary file); "
            "one that holds data is refused unless --force",
        )
        parser.add_argument(
            "--force",
            action="store_true",
            help="overwrite the -w file if it holds data (never one another mcpeek is writing)",
        )
        parser.add_argument(
            "--delay",
            type=float,
            default=DEFAULT_DELAY,
            metavar="SECONDS",
            help=f"pause between the client's steps (default: {DEFAULT_DELAY:g}; 0: full speed)",
        )

    def run(self, args: argparse.Namespace) -> int:
        if not 0 <= args.delay <= 10:  # also refuses nan
            raise UsageError("--delay must be between 0 and 10 seconds")
        path = _prepare_capture(args.write, force=args.force)
        headless = args.headless
        if not headless and not on_a_terminal():
            print("mcpeek: not a terminal: running the demo --headless", file=sys.stderr)
            headless = True
        run = _Background(
            DemoClient(proxy_command(path, delay=args.delay * 0.75), delay=args.delay)
        )
        run.start()
        if headless:
            return _headless(run, path, sys.stdout)
        return _with_viewer(run, path)


class _Background:
    """The scripted client, playing in a thread."""

    def __init__(self, client: DemoClient) -> None:
        self.client = client
        self.error: DemoError | None = None
        self._thread = threading.Thread(target=self._play, name="mcpeek-demo", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _play(self) -> None:
        try:
            play(self.client)
        except DemoError as exc:
            self.error = exc

    def done(self) -> bool:
        return not self._thread.is_alive()

    def stop(self) -> None:
        if not self.done():
            self.client.abort()
        self._thread.join(30.0)

    def failure(self) -> str | None:
        if self.error is None or self.client.aborted:
            return None
        return str(self.error)


def _prepare_capture(path: Path | None, *, force: bool) -> Path:
    """An empty capture file (so that a reader never sees an old one's records), made
    as the proxy would make it; the proxy then takes it as it is (empty)."""
    if path is None:
        fd, name = tempfile.mkstemp(prefix="mcpeek-demo-", suffix=".jsonl")
        os.close(fd)
        return Path(name)
    try:
        os.close(open_for_writing(path, force=force))
    except CaptureFileError as exc:
        raise UsageError(f"cannot write the capture: {exc}") from None
    except OSError as exc:
        raise UsageError(f"cannot write the capture {path}: {exc.strerror or exc}") from None
    return path


class _StderrPrinter(AnalysisListener):
    """The server's stderr lines (its log), between the flows."""

    def __init__(self, out: TextIO) -> None:
        self.out = out

    def on_record(self, record: Record, conversation: Conversation | None) -> None:
        if isinstance(record, Stderr) and record.raw is not None:
            print(f"{clock(record.t)}  stderr  {record.raw}", file=self.out, flush=True)


def _headless(run: _Background, path: Path, out: TextIO) -> int:
    from mcpeek.inspector.cli.lint_report import FileResult, write_text
    from mcpeek.rules.engine import Reported, RuleEngine

    print(INTRO, file=out, flush=True)
    print(file=out)
    found: list[Reported] = []
    analyzer = Analyzer([FlowPrinter(out), _StderrPrinter(out), RuleEngine(found.append)])
    reader = CaptureReader(path)
    try:
        try:
            run_capture(reader, analyzer, follow=True, stop=run.done)
        except CaptureError as exc:
            run.stop()
            print(f"mcpeek: demo failed: {run.failure() or exc}", file=sys.stderr)
            return DEMO_FAILED
    except KeyboardInterrupt:
        run.stop()
        return _interrupted(path, out)
    except BrokenPipeError:  # `mcpeek demo --headless | head`: the reader has seen enough
        return _reader_gone(run)
    run.stop()
    failure = run.failure()
    if failure is not None:
        print(f"mcpeek: demo failed: {failure}", file=sys.stderr)
        return DEMO_FAILED
    try:
        print(
            "\nviolations (the demo server breaks two rules on purpose: "
            "tools.output-schema and result.result-type-missing):\n",
            file=out,
        )
        write_text([FileResult(str(path), violations=found, problems=reader.problems)], out)
        _print_capture(path, out)
    except BrokenPipeError:
        return _reader_gone(run)
    return 0


def _reader_gone(run: _Background) -> int:
    run.stop()
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


def _with_viewer(run: _Background, path: Path) -> int:
    deadline = time.monotonic() + START_TIMEOUT
    while _size(path) == 0:  # the viewer must find at least the header
        if run.done() or time.monotonic() > deadline:
            run.stop()
            print(
                f"mcpeek: demo failed: {run.failure() or 'mcpeek did not start'}", file=sys.stderr
            )
            return DEMO_FAILED
        time.sleep(0.02)
    from mcpeek.tui.app import McpeekApp

    app = McpeekApp([path], follow=True, recheck_rules=False)
    try:
        app.run()
    except KeyboardInterrupt:
        run.stop()
        return _interrupted(path, sys.stdout)
    finally:
        run.stop()
    failure = run.failure()
    if failure is not None:
        print(f"mcpeek: demo failed: {failure}", file=sys.stderr)
        return DEMO_FAILED
    if run.client.aborted:
        print("the demo was stopped before its end (the viewer was closed)")
    _print_capture(path, sys.stdout)
    return 0


def _interrupted(path: Path, out: TextIO) -> int:
    """Ctrl-C: the capture stays (a temporary file too), so say where it is."""
    try:
        print("\nthe demo was stopped before its end (Ctrl-C)", file=out)
        _print_capture(path, out)
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 130


def _print_capture(path: Path, out: TextIO) -> None:
    print(f"capture: {path}", file=out)
    print(f"  mcpeek view {path}    the terminal UI on it", file=out)
    print(f"  mcpeek lint {path}    its violations (--format json|sarif|junit)", file=out)
    print(f"  mcpeek show {path}    its flows, one line each", file=out, flush=True)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0
