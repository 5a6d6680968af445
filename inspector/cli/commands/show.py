"""``mcpeek show FILE [--format text|json] [--follow] [--slow S]``: flows, one per line.

Like mitmdump reading a file: each flow is printed when it ends (a request
answered, failed, cancelled or left unanswered; a notification that belongs
to no request at once). ``--follow`` keeps reading a capture that a proxy is
still writing, until its server exits, its proxy lets go of the file, or you
press Ctrl-C. While following, a request still unanswered ``--slow`` seconds
after it was sent gets a line at once (``(slow: no answer after 5.0 s)``; in
JSON, its flow with ``"status":"pending"`` and ``pending_ms``), then its usual
line when it ends.

Text:  12:01:02.345  → tools/call get_weather  id 3  ← complete  12.3 ms  [2 progress]
JSON:  {"flow":1,"method":"tools/call","name":"get_weather","ids":[3],"status":"complete",...}

With ``--format json``, once the capture is read, one more line per
conversation: its server surface (``{"kind":"conversation","conversation":"stdio",
"era":...,"protocol_version":...,"lists":{"tools":{...}},...}``: its members are in docs/diff.md).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from pathlib import Path

import msgspec

from mcpeek.inspector.analysis import AnalysisListener, Analyzer
from mcpeek.inspector.analysis.analyzer import DEFAULT_TIMEOUT
from mcpeek.inspector.capture.files import WriterGone
from mcpeek.inspector.capture.reader import CaptureError, CaptureReader
from mcpeek.inspector.capture.run import run_capture
from mcpeek.inspector.cli.base import Command, UsageError, add_slow_option, slow_seconds
from mcpeek.inspector.surface import SurfaceListener
from mcpeek.inspector.surface.model import conversation_line
from mcpeek.inspector.views.flowline import FlowPrinter
from mcpeek.inspector.views.in_flight import InFlight, SlowCalls


class ShowCommand(Command):
    name = "show"
    order = 40
    help = "print the flows of a capture, one line each (headless)"
    description = __doc__ or ""

    def configure(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "file", type=Path, metavar="FILE", help="capture file (.jsonl or .jsonl.gz)"
        )
        parser.add_argument(
            "--format",
            choices=("text", "json"),
            default="text",
            help="text (default: one line per flow) or json (one object per flow)",
        )
        parser.add_argument(
            "-f",
            "--follow",
            action="store_true",
            help="keep reading as the capture grows, until its proxy is done",
        )
        parser.add_argument(
            "--timeout",
            type=float,
            default=DEFAULT_TIMEOUT,
            metavar="SECONDS",
            help="declare a request unanswered after this long (default: 60)",
        )
        add_slow_option(parser, "with --follow, print a line at once for")

    def run(self, args: argparse.Namespace) -> int:
        if not math.isfinite(args.timeout) or args.timeout <= 0:
            raise UsageError("--timeout must be a finite number of seconds above 0")
        slow = slow_seconds(args)
        printer = FlowPrinter(sys.stdout, args.format)
        in_flight = InFlight()
        surfaces = SurfaceListener()
        listeners: list[AnalysisListener] = [printer, in_flight]
        if args.format == "json":
            listeners.append(surfaces)
        analyzer = Analyzer(listeners, timeout=args.timeout)
        analysis = SlowCalls(analyzer, in_flight, slow, printer.slow)
        reader = CaptureReader(args.file)
        interrupted = False
        try:
            try:
                # An HTTP capture has no exit event: following ends once its
                # proxy has let go of the file (a stdio one ends at its exit).
                run_capture(reader, analysis, follow=args.follow, stop=WriterGone(args.file))
            except KeyboardInterrupt:
                # Ctrl-C is how `show -f` is meant to stop; a plain show was cut short.
                interrupted = not args.follow
            for surface in surfaces.surfaces():  # (none unless --format json)
                print(msgspec.json.encode(conversation_line(surface)).decode(), flush=True)
        except CaptureError as exc:
            raise UsageError(str(exc)) from None
        except BrokenPipeError:  # `mcpeek show x | head`: the reader has seen enough
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 0
        for problem in reader.problems:
            print(f"mcpeek: {args.file}: {problem}", file=sys.stderr)
        return 130 if interrupted else 0
