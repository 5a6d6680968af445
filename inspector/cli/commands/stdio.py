"""``mcpeek stdio [-w FILE] -- CMD [ARG...]``: wrap a stdio MCP server.

Point the client's MCP config at mcpeek instead of the server::

    "command": "mcpeek", "args": ["stdio", "-w", "cap.jsonl", "--", "python", "server.py"]

mcpeek's stdin/stdout are the protocol pipe: it never prints there. Its own
messages go to stderr, prefixed ``mcpeek:``.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import sys

from mcpeek.inspector.cli.acting import add_action_options, build_actor, with_control
from mcpeek.inspector.cli.base import Command, UsageError, add_slow_option, slow_seconds
from mcpeek.inspector.cli.live import LiveChecks, record_while
from mcpeek.inspector.cli.otlp_live import OtlpFollower, add_otlp_option
from mcpeek.inspector.cli.recording import (
    RecordingErrors,
    add_capture_options,
    open_capture,
    start_run,
)
from mcpeek.inspector.paths import default_capture_path
from mcpeek.inspector.pipeline import Recorder
from mcpeek.inspector.proxy.console import Console
from mcpeek.inspector.proxy.pipes import printable
from mcpeek.inspector.proxy.stdio import StdioRelay
from mcpeek.inspector.proxy.stdio_act import ActingStdioRelay
from mcpeek.inspector.proxy.tap import StdioTap


class StdioCommand(Command):
    name = "stdio"
    order = 10
    help = "wrap a stdio MCP server: relay, record and check its traffic"
    description = __doc__ or ""

    def configure(self, parser: argparse.ArgumentParser) -> None:
        add_capture_options(parser)
        parser.add_argument(
            "--grace",
            type=float,
            default=3.0,
            metavar="SECONDS",
            help="after the client closes stdin, how long the server gets to exit before "
            "SIGTERM, and then before SIGKILL (default: 3)",
        )
        parser.add_argument(
            "--log",
            choices=("flows",),
            action="append",
            default=[],
            help="also print on stderr: 'flows', one line per flow as it ends",
        )
        add_slow_option(parser, "with --log flows, print a line at once for")
        parser.add_argument(
            "--no-check",
            action="store_true",
            help="do not run the spec rules live (no violation records, no flags on stderr)",
        )
        parser.add_argument(
            "--no-redact",
            action="store_true",
            help="keep credentials and recognisable secrets in the capture",
        )
        parser.add_argument(
            "-q",
            "--quiet",
            action="store_true",
            help="print nothing on stderr but errors (violations are still recorded)",
        )
        add_otlp_option(parser)
        add_action_options(parser)
        parser.add_argument(
            "server_command",
            nargs=argparse.REMAINDER,
            metavar="-- CMD [ARG...]",
            help="the server command line, after --",
        )

    def run(self, args: argparse.Namespace) -> int:
        slow = slow_seconds(args)
        command = list(args.server_command)
        if command and command[0] == "--":
            command = command[1:]
        if not command:
            raise UsageError(
                "stdio needs the server command after --, e.g. mcpeek stdio -- python server.py"
            )
        if not math.isfinite(args.grace) or args.grace < 0:
            raise UsageError("--grace must be a number of seconds, 0 or more")
        otlp = OtlpFollower(args.otlp)
        console = Console(quiet=args.quiet)
        actor = build_actor(args, lambda text: console.say(text, force=True))
        # (a closed stdin, stdout or stderr has /dev/null: main.standard_streams)
        path = args.write or default_capture_path(home=args.home)
        writer = open_capture(
            path,
            force=args.force,
            transport="stdio",
            target=[printable(a) for a in command],
            redact=not args.no_redact,
        )
        path = writer.path  # the name it took ({n}, {pid})
        # Whatever a library prints must not corrupt the protocol pipe.
        sys.stdout = sys.stderr
        live = LiveChecks(
            writer,
            console.say,
            checks=not args.no_check,
            flows="flows" in args.log,
            recorded=lambda: recorder.recorded,
            slow=slow,
        )
        internal_error = RecordingErrors(
            writer, lambda text: console.say(text, force=True), on_cut=live.capture_cut
        )
        recorder = Recorder(writer, on_error=internal_error)
        tap = StdioTap(recorder.emit)

        def started() -> None:
            start_run(writer, otlp)
            # Said once the server runs: one that cannot start leaves no capture.
            console.say(f"recording to {path}")
            if os.isatty(0):  # started by hand: nothing happens until someone types JSON-RPC
                console.say(
                    "stdin is a terminal: waiting for an MCP client to write JSON-RPC on "
                    "stdin (a client normally starts mcpeek stdio itself); Ctrl-D or Ctrl-C quits"
                )

        relay = (
            StdioRelay(
                command,
                tap,
                console,
                grace=args.grace,
                on_tap_error=internal_error,
                on_spawned=started,
            )
            if actor is None
            else ActingStdioRelay(
                command,
                tap,
                console,
                actor.decide,
                grace=args.grace,
                on_tap_error=internal_error,
                on_spawned=started,
            )
        )
        if actor is not None and isinstance(relay, ActingStdioRelay):
            actor.injector.deliver = relay.inject  # the control channel may inject
        try:
            run = with_control(relay.run, actor, path, lambda text: console.say(text, force=True))
            code = asyncio.run(record_while(live, run, console))
        finally:
            if writer.committed:
                writer.close()
            else:  # the server did not start, or its capture could not replace the old
                writer.discard()  # one (said on stderr): nothing worth a capture
            otlp.finish()
        if relay.spawned:
            count = tap.message_count
            flagged = f", {live.violations} violation{'s' if live.violations != 1 else ''}"
            # After a recording error the file holds only part of them: say so, not "recorded".
            where = (
                f"seen; the capture {path} is incomplete"
                if internal_error.incomplete
                else f"recorded in {path}"
            )
            console.say(
                f"{count} message{'s' if count != 1 else ''}{flagged if live.violations else ''} "
                f"{where}; server exit code {code}"
            )
        console.close()
        return code
