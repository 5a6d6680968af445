"""``mcpeek replay FILE (-- CMD... | --url URL)``: re-send a capture's client side, compare.

The client's side of the recorded conversation is sent again, in order, to a
live server: spawned from ``CMD`` and spoken to over stdio, or reached at a
Streamable HTTP ``URL``. Requests get new ids; the handshake is the recorded
one (``initialize`` or ``server/discover``); on HTTP the live session id
replaces the recorded one; a multi round-trip retry carries the
``requestState`` the live server issued; requests from the live server get
the recorded client's answers. Each live response is compared with the
recorded one, ignoring the id, volatile ``_meta`` members (timestamps in
``_meta`` included) and the ``--ignore`` JSON Pointers (relative to the
response message, e.g. ``/result/content/0/text``); the spec rules check the
live traffic too.

``--flow N`` (repeatable) and ``--filter EXPR`` (the viewer's filter
language) re-send only the flows selected, numbered as the viewer's ``#``
column and the ``"flow"`` of ``mcpeek show --format json`` (show's text lines
are in the order flows end, unnumbered), after the handshake their
conversation made.

Exit code: 0 when every flow matched and the server broke no rule (at
error severity), 1 when anything differs or it did, 2 on a usage error, an
unreadable capture, or a server that cannot be started or reached.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from mcpeek.inspector.cli.base import Command, UsageError, refuse_overwriting
from mcpeek.inspector.cli.urls import check_http_url

if TYPE_CHECKING:
    from mcpeek.inspector.cli.replay_findings import ServerFindings
    from mcpeek.inspector.replay.replay_plan import ReplayPlan
    from mcpeek.inspector.replay.replay_report import FlowReport

DEFAULT_TIMEOUT = 10.0


class ReplayCommand(Command):
    name = "replay"
    order = 70
    help = "re-send the client side of a capture to a live server and diff the answers"
    description = __doc__ or ""

    def __init__(self) -> None:
        # Options may follow FILE (``replay cap.jsonl -w out.jsonl -- CMD``), where the
        # command's REMAINDER has already taken them: they are parsed again with this.
        self._options = argparse.ArgumentParser(prog="mcpeek replay", add_help=False)
        _add_options(self._options)

    def configure(self, parser: argparse.ArgumentParser) -> None:
        # Optional to argparse, checked in run() (see serve.py).
        parser.add_argument(
            "file", type=Path, nargs="?", metavar="FILE", help="the capture to replay"
        )
        _add_options(parser)
        parser.add_argument(
            "server_command",
            nargs=argparse.REMAINDER,
            metavar="-- CMD [ARG...]",
            help="the server command line, after --",
        )

    def run(self, args: argparse.Namespace) -> int:
        try:
            return self._run(args)
        except KeyboardInterrupt:  # (loading the capture, or printing the report)
            print("mcpeek: replay interrupted (Ctrl-C)", file=sys.stderr)
            return 130

    def _run(self, args: argparse.Namespace) -> int:
        if args.file is None:
            raise UsageError("replay needs a capture FILE (replay FILE -- CMD... | --url URL)")
        from mcpeek import inspector
        from mcpeek.inspector.capture.reader import CaptureError
        from mcpeek.inspector.replay.canonical import PointerError, parse_pointers
        from mcpeek.inspector.replay.credentials import recorded_origin
        from mcpeek.inspector.replay.replay_plan import build_plan

        command = list(args.server_command)
        if command and command[0].startswith("-") and command[0] != "--":
            # argparse left the options after FILE (and the "--") in the remainder
            cut = command.index("--") if "--" in command else len(command)
            self._options.parse_args(command[:cut], namespace=args)
            command = command[cut:]
        if command and command[0] == "--":
            command = command[1:]
        if args.url is not None and not args.url.strip():
            raise UsageError("--url is empty: give the URL of a Streamable HTTP server")
        if bool(command) == bool(args.url):
            given = "both were given" if command else "neither was given"
            servers = "'-- CMD [ARG...]' (stdio) or '--url URL' (HTTP)"
            raise UsageError(f"replay needs one server: {servers}; {given}")
        if args.url:
            check_http_url("--url", args.url)
        if not math.isfinite(args.timeout) or args.timeout <= 0:
            raise UsageError("--timeout must be a positive number of seconds")
        try:
            ignore = parse_pointers(args.ignore)
        except PointerError as exc:
            raise UsageError(f"--ignore: {exc}") from None
        headers = [_header(text) for text in args.header]
        if command and (headers or args.send_credentials):  # (no header goes over stdio)
            option = "--header" if headers else "--send-credentials"
            raise UsageError(f"{option} goes with --url: a stdio server gets no HTTP headers")
        try:
            capture = inspector.load(args.file)
        except CaptureError as exc:
            raise UsageError(str(exc)) from None
        plan = build_plan(capture.records, capture.flows, capture.header.transport)
        if not plan.flows:
            raise UsageError(f"{args.file}: the capture has no client request to replay")
        if args.flow or args.filter is not None:
            from mcpeek.inspector.cli.flow_selection import selected_plan

            plan = selected_plan(args.file, plan, capture, args.flow, args.filter)
        recorded = recorded_origin(capture.header.transport, capture.header.target)
        return _Session(args, plan, ignore, headers, command, recorded).run()


def _add_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--url", help="a Streamable HTTP server to replay to")
    parser.add_argument(
        "--flow",
        action="append",
        type=int,
        default=[],
        metavar="N",
        help=(
            're-send only flow N: the viewer\'s # column, the "flow" of '
            "mcpeek show --format json (repeatable)"
        ),
    )
    parser.add_argument(
        "--filter",
        metavar="EXPR",
        help="re-send only the client requests this filter matches (the viewer's language)",
    )
    parser.add_argument(
        "--ignore",
        action="append",
        default=[],
        metavar="POINTER",
        help="a JSON Pointer into the response message not to compare, e.g. "
        "/result/content/0/text (repeatable)",
    )
    parser.add_argument(
        "-w", "--write", type=Path, metavar="FILE", help="write a capture of the replay"
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="overwrite the -w file if it holds data (never one another mcpeek is writing)",
    )
    parser.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="text (default: a diff per flow) or json (one object per flow)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT,
        metavar="S",
        help=f"seconds to wait for each live response (default: {DEFAULT_TIMEOUT:g})",
    )
    parser.add_argument(
        "-H",
        "--header",
        action="append",
        default=[],
        metavar="'NAME: VALUE'",
        help="an HTTP header to send with every request, e.g. one the capture redacted",
    )
    parser.add_argument(
        "--send-credentials",
        action="store_true",
        help="send the capture's recorded credential headers (Authorization, Cookie, API "
        "keys...) even to a --url whose origin is not the one recorded",
    )
    parser.add_argument(
        "--no-check", action="store_true", help="do not run the spec rules on the live traffic"
    )


def _header(text: str) -> tuple[str, str]:
    from mcpeek.inspector.replay.replay_headers import header_problem

    name, sep, value = text.partition(":")
    name, value = name.strip(" \t"), value.strip(" \t")
    if not sep or not name:
        raise UsageError(f"--header must look like 'Name: value', not {text!r}")
    problem = header_problem(name, value)
    if problem is not None:  # checked before anything is sent
        raise UsageError(f"--header {text!r} cannot be sent: {problem}")
    return name, value


class _Session:
    """One replay run: the tape, the rules, the transport, the report."""

    def __init__(
        self,
        args: argparse.Namespace,
        plan: ReplayPlan,
        ignore: list[tuple[str, ...]],
        headers: list[tuple[str, str]],
        command: list[str],
        recorded_origin: str | None = None,
    ) -> None:
        self.args = args
        self.recorded_origin = recorded_origin
        self.plan = plan
        self.ignore = ignore
        self.headers = headers
        self.command = command

    def run(self) -> int:
        from mcpeek.inspector.cli.recording import open_capture
        from mcpeek.inspector.cli.replay_findings import ServerFindings
        from mcpeek.inspector.replay.replay_transport import ReplayError
        from mcpeek.inspector.replay.rerun import ReplayTarget, run_plan
        from mcpeek.inspector.replay.stopping import ReplayInterrupted
        from mcpeek.rules.engine import RuleEngine

        args = self.args
        target = ReplayTarget(
            command=self.command or None,
            url=args.url,
            headers=self.headers,
            send_credentials=args.send_credentials,
        )
        refuse_overwriting(args.write, args.file)
        findings = ServerFindings()
        listeners = [] if args.no_check else [findings, RuleEngine(findings.add)]
        writer = None
        try:
            if args.write is not None:
                writer = open_capture(
                    args.write, force=args.force, transport=target.transport, target=target.name
                )
            outcome = run_plan(
                self.plan,
                target,
                timeout=args.timeout,
                ignore=self.ignore,
                writer=writer,
                listeners=listeners,
                origin=self.recorded_origin,
                stop_signals=True,
            )
        except ReplayError as exc:
            raise UsageError(str(exc)) from None
        except ReplayInterrupted as exc:
            print(f"mcpeek: {exc}", file=sys.stderr)
            return exc.exit_code
        except KeyboardInterrupt:  # before the replay began: its capture is not kept
            if writer is not None:
                writer.discard()
            print("mcpeek: replay interrupted (Ctrl-C) before it began", file=sys.stderr)
            return 130
        if outcome.tape.error is not None:
            print(f"mcpeek: {outcome.tape.error}", file=sys.stderr)
        findings.decide(outcome.tape.direction)
        return self._report(outcome.reports, findings, outcome.notes)

    def _report(self, reports: list[FlowReport], findings: ServerFindings, notes: list[str]) -> int:
        import msgspec

        from mcpeek.inspector.replay.replay_report import write_json, write_text
        from mcpeek.rules.engine import flag_line

        shown, unshown = findings.shown, findings.unshown()
        try:
            if self.args.format == "json":
                items = [msgspec.to_builtins(v) for v in shown]
                write_json(reports, items, notes, sys.stdout, unshown=unshown)
            else:
                lines = [f"mcpeek: {flag_line(v)}" for v in shown]
                write_text(reports, lines, notes, sys.stdout, unshown=unshown)
            sys.stdout.flush()
        except BrokenPipeError:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        failed = any(not r.same for r in reports) or findings.errors > 0
        return 1 if failed else 0
