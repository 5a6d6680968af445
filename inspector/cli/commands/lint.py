"""``mcpeek lint FILE...``: check captures against the spec's rules.

Violations are recomputed from the messages (stored ``violation`` records are
ignored), so an old capture can be re-checked with newer rules.

Exit code: 0 when no violation reaches ``--fail-on`` (default: error), 1
when one does, 2 when a file cannot be read or the command line is wrong.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from pathlib import Path

from mcpeek.inspector.analysis import NOTIFICATION_WINDOW, Analyzer
from mcpeek.inspector.analysis.analyzer import DEFAULT_TIMEOUT
from mcpeek.inspector.capture.reader import CaptureError, CaptureReader
from mcpeek.inspector.capture.run import run_capture
from mcpeek.inspector.cli.base import Command, UsageError

KNOWN_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28")
LEVELS = ("error", "warning", "info")


class LintCommand(Command):
    name = "lint"
    order = 50
    help = "check capture files against the MCP spec's rules"
    description = __doc__ or ""

    def configure(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("files", nargs="+", type=Path, metavar="FILE")
        parser.add_argument(
            "--format",
            choices=("text", "json", "sarif", "junit"),
            default="text",
            help="text (default, grouped by rule), json (one violation per line), "
            "sarif (2.1.0, for code scanning) or junit (one test case per rule)",
        )
        parser.add_argument(
            "--spec",
            metavar="VERSION",
            help=f"check against this protocol version ({', '.join(KNOWN_VERSIONS)})"
            " instead of the one each conversation uses",
        )
        parser.add_argument(
            "--min-severity",
            choices=LEVELS,
            default="info",
            help="report violations at or above this level (default: info)",
        )
        parser.add_argument(
            "--fail-on",
            choices=LEVELS,
            default="error",
            help="exit 1 when a violation at or above this level is found (default: error)",
        )
        parser.add_argument(
            "--ignore",
            action="append",
            default=[],
            metavar="RULE",
            help="a rule ID not to check (repeatable)",
        )
        parser.add_argument(
            "--timeout",
            type=float,
            default=DEFAULT_TIMEOUT,
            metavar="SECONDS",
            help="a request unanswered this long is reported (default: 60)",
        )

    def run(self, args: argparse.Namespace) -> int:
        from mcpeek import rules
        from mcpeek.inspector.cli.lint_report import (
            FileResult,
            JsonLines,
            write_junit,
            write_problems,
            write_sarif,
            write_text,
        )
        from mcpeek.rules.base import SEVERITY_ORDER
        from mcpeek.rules.engine import Reported, RuleEngine

        catalog = rules.catalog()
        if args.spec is not None and args.spec not in KNOWN_VERSIONS:
            raise UsageError(f"unknown --spec {args.spec!r}; known: {', '.join(KNOWN_VERSIONS)}")
        unknown = [r for r in args.ignore if r not in catalog]
        if unknown:
            raise UsageError(f"--ignore: no such rule {', '.join(unknown)} (see: mcpeek rules)")
        if not math.isfinite(args.timeout) or args.timeout <= 0:
            raise UsageError("--timeout must be a finite number of seconds above 0")
        floor = SEVERITY_ORDER[args.min_severity]
        threshold = SEVERITY_ORDER[args.fail_on]
        failing = hidden_failing = 0  # violations at or above --fail-on; not shown of them
        out = sys.stdout
        # JSON lines are written as they are found (lint keeps none in memory); the
        # other formats need every violation of a file first.
        streamed = JsonLines(out) if args.format == "json" else None
        results: list[FileResult] = []
        for path in args.files:
            result = FileResult(str(path))
            results.append(result)
            shown = result.violations
            if streamed is not None:
                streamed.start(result.path)

            def report(v: Reported, shown: list[Reported] = shown) -> None:
                # --fail-on judges every violation found, --min-severity only what is
                # shown; one on a message mcpeek made (a fault, a script) is shown,
                # never the peer's.
                nonlocal failing, hidden_failing
                level = SEVERITY_ORDER.get(v.severity, 2)
                if level >= threshold and v.made is None:
                    failing += 1
                    hidden_failing += level < floor
                if level >= floor:
                    if streamed is not None:
                        streamed.add(v)
                    else:
                        shown.append(v)

            # (only the text report shows the blamed message's excerpt, method and id)
            engine = RuleEngine(
                report, spec=args.spec, ignore=args.ignore, shown=args.format == "text"
            )
            analyzer = Analyzer(
                [engine], timeout=args.timeout, notification_window=NOTIFICATION_WINDOW
            )
            reader = CaptureReader(path)
            try:
                run_capture(reader, analyzer)
            except CaptureError as exc:  # (before the capture's header: nothing reported)
                result.error = str(exc)
                print(f"mcpeek: {exc}", file=sys.stderr)
                continue
            finally:
                if streamed is not None:
                    streamed.flush()  # (this capture's lines out before the next one's notes)
            result.problems = reader.problems
        try:
            if streamed is not None:
                if streamed.error is not None:
                    raise streamed.error
            elif args.format == "text":
                write_text(results, out)
            elif args.format == "sarif":
                write_sarif(results, catalog, out)
            else:
                write_junit(results, catalog, out)
            out.flush()
        except BrokenPipeError:  # `mcpeek lint ... | head`: the reader has seen enough
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        if args.format != "text":  # text prints them in its report, as "note:" lines
            write_problems(results, sys.stderr)
        if any(r.error is not None for r in results):
            return 2
        if hidden_failing:
            print(
                f"mcpeek: {hidden_failing} violation(s) at or above --fail-on {args.fail_on} "
                f"are below --min-severity {args.min_severity}, so not shown",
                file=sys.stderr,
            )
        return 1 if failing else 0
