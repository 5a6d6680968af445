"""``mcpeek view [FILE...]``: the terminal UI on captures.

With files, those captures (a capture that is still being written is
followed). Without, every capture in the capture directory, newest first,
following the live ones and picking up new ones as proxies start: run
``mcpeek stdio`` in your MCP client's config and ``mcpeek view`` in a
terminal, in any order (before any proxy ran, the viewer waits for the
capture directory to appear).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from mcpeek.inspector.capture.reader import CaptureError, CaptureReader
from mcpeek.inspector.cli.base import (
    Command,
    UsageError,
    add_slow_option,
    on_a_terminal,
    slow_seconds,
)
from mcpeek.inspector.paths import capture_dir


class ViewCommand(Command):
    name = "view"
    order = 30
    help = "open the terminal UI on captures (default: every capture, following live ones)"
    description = __doc__ or ""

    def configure(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "files",
            nargs="*",
            type=Path,
            metavar="FILE",
            help="capture files (.jsonl or .jsonl.gz); none: the capture directory",
        )
        follow = parser.add_mutually_exclusive_group()
        follow.add_argument(
            "-f",
            "--follow",
            action="store_true",
            default=None,
            help="follow every capture as it grows (default: those written recently)",
        )
        follow.add_argument(
            "--no-follow", dest="follow", action="store_false", help="read each capture once"
        )
        parser.add_argument(
            "--no-recheck",
            action="store_true",
            help="show the violations stored by the proxy; do not re-run the rules",
        )
        add_slow_option(parser, "in a live capture, make conspicuous")

    def run(self, args: argparse.Namespace) -> int:
        slow = slow_seconds(args)
        directory = None
        for path in args.files:
            _check_readable(path)
        if not args.files:
            directory = capture_dir()  # may not exist yet: the viewer waits for it
        if not on_a_terminal():
            raise UsageError("view needs a terminal (for a headless look: mcpeek show FILE)")
        from mcpeek.tui.app import McpeekApp

        app = McpeekApp(
            list(args.files),
            directory=directory,
            follow=args.follow,
            recheck_rules=not args.no_recheck,
            slow=slow,
        )
        app.run()
        return 0


def _check_readable(path: Path) -> None:
    """Fail early, with lint's words, on a file that is not a capture at all."""
    reader = CaptureReader(path)
    try:
        for _ in reader.records():
            break
    except CaptureError as exc:
        raise UsageError(str(exc)) from None
