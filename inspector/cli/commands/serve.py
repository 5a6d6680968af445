"""``mcpeek serve FILE``: a mock MCP server made of a capture's server side.

Without --listen it speaks on stdio (JSON-RPC lines on stdin and stdout;
mcpeek's own lines go to stderr, prefixed ``mcpeek:``), so a client under
test spawns ``mcpeek serve FILE`` as its server. With --listen HOST:PORT it
is a Streamable HTTP server (loopback only unless --allow-remote); it prints
its URL and runs until Ctrl-C.

Each live request is answered with the recorded answer to the same request
(same method and params; ids, key order and volatile _meta never matter;
--ignore POINTER drops more), with the recorded progress and log messages
first, at the recorded pace (--timing fast: at once). A request that was
not recorded gets a JSON-RPC error naming the closest recorded one, or,
with --on-miss forward, goes to a real server (--forward URL, or -- CMD...).

The client under test is checked by the spec rules as it talks: its
violations are printed on stderr, and with --strict any of them makes the
exit code 1. -w FILE writes a capture of the mock session.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys
from pathlib import Path
from typing import Any

from mcpeek.inspector.cli.base import Command, UsageError, refuse_overwriting

PRINTED_PER_RULE = 10


class ServeCommand(Command):
    name = "serve"
    order = 60
    help = "serve a capture's server side as a mock MCP server (stdio or HTTP)"
    description = __doc__ or ""

    def configure(self, parser: argparse.ArgumentParser) -> None:
        # Optional to argparse, checked in run(): with a REMAINDER after it, argparse
        # would otherwise call the command line "required" too when FILE is missing.
        parser.add_argument(
            "file", type=Path, nargs="?", metavar="FILE", help="capture file (.jsonl or .jsonl.gz)"
        )
        self._options(parser)
        parser.add_argument(
            "command",
            nargs=argparse.REMAINDER,
            help="-- CMD [ARG...]: a stdio server to forward to",
        )

    def _options(self, parser: argparse.ArgumentParser) -> None:
        add = parser.add_argument
        add("--listen", metavar="HOST:PORT", help="serve Streamable HTTP here (port 0: any)")
        add("--allow-remote", action="store_true", help="allow a non-loopback --listen")
        add(
            "--on-miss",
            choices=("error", "forward"),
            help="a request with no recorded answer: answer an error (default), or forward it",
        )
        add(
            "--forward", metavar="URL", help="the real Streamable HTTP server for --on-miss forward"
        )
        add(
            "--timing",
            choices=("recorded", "fast"),
            default="recorded",
            help="wait the recorded delays (default) or answer at once",
        )
        add("--strict", action="store_true", help="exit 1 if the client broke a rule")
        add(
            "--ignore",
            action="append",
            default=[],
            metavar="POINTER",
            help="a JSON Pointer that matching ignores, e.g. /params/arguments/ts (repeatable)",
        )
        add("-w", "--write", metavar="FILE", type=Path, help="write a capture of the mock session")
        add(
            "--force",
            action="store_true",
            help="overwrite the -w file if it holds data (never one another mcpeek is writing)",
        )
        add("--no-check", action="store_true", help="do not check the client against the rules")
        add("-q", "--quiet", action="store_true", help="print nothing on stderr but errors")

    def _split(self, args: argparse.Namespace) -> list[str]:
        """Options written after FILE land in the remainder: parse them, keep ``-- CMD``."""
        rest: list[str] = args.command
        if not rest or not rest[0].startswith("-") or rest[0] == "--":
            return rest[1:] if rest[:1] == ["--"] else rest  # argparse may drop the "--"
        cut = rest.index("--") if "--" in rest else len(rest)
        if cut:
            parser = argparse.ArgumentParser(prog="mcpeek serve FILE")
            self._options(parser)
            parser.parse_args(rest[:cut], namespace=args)
        return rest[cut + 1 :]

    def run(self, args: argparse.Namespace) -> int:
        if args.file is None:
            raise UsageError("serve needs a capture FILE (mcpeek serve FILE [--listen HOST:PORT])")
        from mcpeek.inspector.capture.reader import CaptureError
        from mcpeek.inspector.cli.recording import open_capture
        from mcpeek.inspector.cli.urls import check_http_url
        from mcpeek.inspector.proxy.guard import is_loopback_host, parse_listen
        from mcpeek.inspector.replay.canonical import PointerError
        from mcpeek.inspector.replay.mock import MockServer, OnMiss, ServeError
        from mcpeek.inspector.replay.tape import Tape

        command = self._split(args)
        if command and args.forward:
            raise UsageError("give either --forward URL or -- CMD, not both")
        upstream = bool(command or args.forward)
        on_miss: OnMiss = args.on_miss or ("forward" if upstream else "error")
        if on_miss == "forward" and not upstream:
            raise UsageError("--on-miss forward needs a server: --forward URL or -- CMD...")
        if on_miss == "error" and upstream:
            raise UsageError("--forward and -- CMD are for --on-miss forward")
        if args.strict and args.no_check:  # (no rule would run: --strict could never fail)
            raise UsageError("--strict needs the rules that --no-check turns off: give one")
        if args.forward:
            check_http_url("--forward", args.forward)
        listen: tuple[str, int] | None = None
        if args.listen is not None:
            try:
                listen = parse_listen(args.listen)
            except ValueError as exc:
                raise UsageError(str(exc)) from None
            if not is_loopback_host(listen[0]) and not args.allow_remote:
                raise UsageError(
                    f"--listen {args.listen}: not a loopback address; the mock would be "
                    "reachable from the network (add --allow-remote if you mean it)"
                )
        try:
            server = MockServer.from_capture(
                args.file, ignore=args.ignore, timing=args.timing, on_miss=on_miss
            )
        except PointerError as exc:
            raise UsageError(f"--ignore: {exc}") from None
        except (CaptureError, ServeError) as exc:
            text = f"{args.file}: {exc}" if isinstance(exc, ServeError) else str(exc)
            raise UsageError(text) from None
        refuse_overwriting(args.write, args.file)
        writer = None
        transport = "stdio" if listen is None else "http"
        if args.write is not None:
            writer = open_capture(
                args.write, force=args.force, transport=transport, target=str(args.file)
            )
        say = _Say(args.quiet)
        checks = _ClientChecks(say)
        listeners = [] if args.no_check else [checks.engine()]
        # The session has started once the client said something: a mock that
        # never served (a port taken, a forward server that cannot start) leaves
        # no capture, and an old one that --force was to replace stays as it was.
        tape = Tape(transport=transport, writer=writer, listeners=listeners, started_by="c2s")
        checks.tape = tape
        try:
            if listen is None:
                self._stdio(server, tape, command, args.forward, say)
            else:
                self._http(server, tape, listen, args, say)
        except OSError as exc:
            tape.discard()
            where = f"--listen {args.listen}" if listen else "stdio"
            raise UsageError(f"{where}: {exc.strerror or exc}") from None
        except BaseException:
            tape.discard()  # keeps the capture of a session that had started
            raise
        finally:
            tape.close()
            if tape.error is not None:
                say(tape.error, force=True)
        if args.strict and checks.found:
            say(f"--strict: the client broke {len(checks.found)} rule(s):", force=True)
            for line in checks.found:
                say(f"  {line}", force=True)
            return 1
        return 0

    def _stdio(
        self, server: Any, tape: Any, command: list[str], url: str | None, say: _Say
    ) -> None:
        from mcpeek.inspector.replay.forward import HttpUpstream, StdioUpstream
        from mcpeek.inspector.replay.mock_stdio import StdioMock

        upstream: Any = None
        if command:
            upstream = lambda on_message: StdioUpstream(command, on_message)  # noqa: E731
        elif url:
            upstream = lambda on_message: HttpUpstream(url, on_message)  # noqa: E731
        mock = StdioMock(server, tape=tape, upstream=upstream, note=say)

        async def main() -> None:
            stop = asyncio.Event()
            loop = asyncio.get_running_loop()
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.add_signal_handler(sig, stop.set)
            await mock.run(stop)

        from mcpeek.inspector.replay.forward import UpstreamError

        try:
            asyncio.run(main())
        except UpstreamError as exc:
            raise UsageError(str(exc)) from None

    def _http(
        self, server: Any, tape: Any, listen: tuple[str, int], args: argparse.Namespace, say: _Say
    ) -> None:
        from mcpeek.inspector.proxy.guard import RequestGuard
        from mcpeek.inspector.replay.mock_http import HttpMock, serve_http

        guard = RequestGuard(listen[1], allow_remote=args.allow_remote)
        mock = HttpMock(server, guard, tape=tape, forward_url=args.forward, note=say)

        async def main() -> None:
            stop = asyncio.Event()
            loop = asyncio.get_running_loop()
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.add_signal_handler(sig, stop.set)

            def listening(url: str) -> None:
                say(f"serving {args.file} ({server.era or 'unknown'} era) on {url}", force=True)

            await serve_http(mock, listen[0], listen[1], stop, listening)

        asyncio.run(main())


class _Say:
    def __init__(self, quiet: bool) -> None:
        self.quiet = quiet

    def __call__(self, text: str, *, force: bool = False) -> None:
        if self.quiet and not force:
            return
        with contextlib.suppress(OSError, ValueError):
            sys.stderr.write(f"mcpeek: {text}\n")
            sys.stderr.flush()


class _ClientChecks:
    """The rule engine on the mock session; keeps what the client got wrong."""

    def __init__(self, say: _Say) -> None:
        self.say = say
        self.tape: Any = None
        self.found: list[str] = []
        self._printed: dict[str, int] = {}

    def engine(self) -> Any:
        from mcpeek.rules.engine import RuleEngine

        return RuleEngine(self.report)

    def report(self, reported: Any) -> None:
        from mcpeek.rules.blame import blames_the_client
        from mcpeek.rules.engine import flag_line

        if self.tape is None or not blames_the_client(reported, self.tape.direction):
            return  # e.g. the capture's own server behaviour: mcpeek lint shows it
        line = flag_line(reported)
        if reported.severity != "info":
            self.found.append(line)
        count = self._printed.get(reported.rule, 0)
        self._printed[reported.rule] = count + 1
        if count < PRINTED_PER_RULE:
            self.say(line, force=reported.severity == "error")
