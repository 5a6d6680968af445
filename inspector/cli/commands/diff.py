"""``mcpeek diff A B [--format text|json]``: compare two captures.

The server surface (tools, resources, resource templates and prompts added,
removed or changed, in any member: name, title, description, schemas,
annotations; both sides' capabilities; the era and protocol version; the
server's info), then the traffic: requests with the same method and
canonical params, matched as ``serve`` matches them, whose answers differ,
and requests sent in one capture only. Each capture's own drift (a
definition that changed between two list answers of one conversation) is
reported too, and a change no ``list_changed`` announced is called what it
is: a rug pull.

Exit code: 0 when A and B are the same (drift within a capture does not
count: ``mcpeek diff X X`` exits 0 and still warns of X's rug pulls), 1 when
they differ, 2 on a usage error or a file that is not a readable capture.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import msgspec

from mcpeek.inspector.capture.reader import CaptureError
from mcpeek.inspector.cli.base import Command, UsageError


class DiffCommand(Command):
    name = "diff"
    order = 65
    help = "compare two captures: server surface, traffic, tool drift"
    description = __doc__ or ""

    def configure(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("a", type=Path, metavar="A", help="the first capture")
        parser.add_argument("b", type=Path, metavar="B", help="the capture compared with A")
        parser.add_argument(
            "--format",
            choices=("text", "json"),
            default="text",
            help="text (default, for a reviewer) or json (one object, see docs/diff.md)",
        )
        parser.add_argument(
            "--ignore",
            action="append",
            default=[],
            metavar="POINTER",
            help="a JSON Pointer to leave out when matching requests and comparing answers "
            "(e.g. /result/content/0/text); repeatable",
        )

    def run(self, args: argparse.Namespace) -> int:
        from mcpeek.inspector.replay.canonical import PointerError, parse_pointers
        from mcpeek.inspector.surface.report import diff_captures, render_text

        try:
            ignore = parse_pointers(args.ignore)
        except PointerError as exc:
            raise UsageError(f"--ignore: {exc}") from None
        try:
            report = diff_captures(args.a, args.b, ignore)
        except CaptureError as exc:
            raise UsageError(str(exc)) from None
        try:
            if args.format == "json":
                sys.stdout.write(msgspec.json.encode(report).decode() + "\n")
            else:
                sys.stdout.write("".join(line + "\n" for line in render_text(report)))
            sys.stdout.flush()
        except BrokenPipeError:  # `mcpeek diff a b | head`: the reader has seen enough
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0 if report.same else 1
