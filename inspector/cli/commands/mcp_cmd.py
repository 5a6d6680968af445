"""``mcpeek mcp [--http HOST:PORT] [--capture FILE]... [--allow-run]``: the captures, served.

For assistants (Claude Desktop, an IDE, an agent): the captures of the
capture directory and every ``--capture FILE``, offered as tools
(list_captures, list_flows, get_flow, lint, diff_captures, explain_rule,
replay_flow), resources (mcpeek://captures, the list, and mcpeek://captures/{name}) and a prompt
(why_did_this_call_fail).
On stdio by default; ``--http HOST:PORT`` serves Streamable HTTP on a
loopback address. ``replay_flow`` only runs the server a capture recorded,
unless ``--allow-run``. See docs/assistants.md.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from mcpeek.inspector.cli.base import ClosedOutput, Command, UsageError, directory
from mcpeek.inspector.proxy.console import Console, library_logs

#: The loggers of the libraries that serve ``mcpeek mcp`` (the SDK, uvicorn).
LIBRARY_LOGGERS = ("mcp", "uvicorn", "asyncio")


class McpCommand(Command):
    name = "mcp"
    order = 60
    help = "serve the captures to an assistant, as an MCP server (stdio or --http)"
    description = __doc__ or ""

    def configure(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "--http",
            metavar="HOST:PORT",
            help="serve Streamable HTTP on this loopback address (default: stdio)",
        )
        parser.add_argument(
            "--capture",
            action="append",
            default=[],
            type=Path,
            metavar="FILE",
            help="a capture file to offer besides the capture directory's (repeatable)",
        )
        parser.add_argument(
            "--home",
            type=directory,
            metavar="DIR",
            help="the capture directory (default: $MCPEEK_HOME or the user state dir)",
        )
        parser.add_argument(
            "--allow-run",
            action="store_true",
            help="let replay_flow run any command or URL, not only the one a capture recorded",
        )

    def run(self, args: argparse.Namespace) -> int:
        from mcpeek.inspector.capture.opening import CaptureError, open_regular
        from mcpeek.inspector.paths import capture_dir
        from mcpeek.inspector.proxy.guard import is_loopback_host, parse_listen

        listen: tuple[str, int] | None = None
        if args.http is not None:
            try:
                listen = parse_listen(args.http)
            except ValueError as exc:
                raise UsageError(str(exc).replace("--listen", "--http")) from None
            if not is_loopback_host(listen[0]):
                raise UsageError(f"--http {args.http}: mcpeek mcp listens on loopback only")
        if listen is None:
            _need_standard_streams()
        for path in args.capture:
            # Opened as every reader opens a capture: a directory (--home names one), a
            # FIFO or a file it may not read is refused now, not at an assistant's call.
            try:
                open_regular(path).close()
            except CaptureError as exc:
                raise UsageError(f"--capture {exc}") from None
        home = args.home.expanduser() if args.home is not None else capture_dir()
        if home.exists() and not home.is_dir():  # (missing: no recording made yet)
            named = (
                f"--home {args.home}" if args.home is not None else f"the capture directory {home}"
            )
            raise UsageError(f"{named}: not a directory (of captures)")
        try:
            from mcpeek.inspector.assist.desk import Desk
            from mcpeek.inspector.assist.rerun import Rerunner
            from mcpeek.inspector.assist.serve import listen_socket, serve_http, serve_stdio
            from mcpeek.inspector.assist.server import build_server
            from mcpeek.inspector.assist.shelf import Shelf
        except ImportError as exc:
            if (exc.name or "").startswith("mcpeek"):
                raise  # a fault of mcpeek's own, not a missing extra
            raise UsageError(
                "mcpeek mcp needs the official MCP SDK: pip install '.[mcp]' in mcpeek's clone"
            ) from None
        server = build_server(
            Desk(Shelf(home, list(args.capture))), Rerunner(allow_run=args.allow_run)
        )
        # The SDK's and uvicorn's log records (a refused Host header, say) as mcpeek's
        # one-line messages, not their multi-line Rich output.
        console = Console()
        try:
            with library_logs(console, LIBRARY_LOGGERS):
                if listen is None:
                    serve_stdio(server)
                    return 0
                try:
                    sock = listen_socket(*listen)
                except OSError as exc:
                    why = exc.strerror or exc
                    raise UsageError(f"--http {args.http}: cannot listen: {why}") from None
                serve_http(server, sock)
                return 0
        finally:
            console.close()


def _need_standard_streams() -> None:
    """The stdio server speaks on fds 0 and 1: a closed one was a traceback from the
    SDK (Python leaves sys.stdin or sys.stdout None; the command line's start stands
    /dev/null on the descriptor and :class:`ClosedOutput` in for the output)."""
    closed_output = sys.stdout is None or isinstance(sys.stdout, ClosedOutput)
    for name, closed in (("input", sys.stdin is None), ("output", closed_output)):
        if closed:
            raise UsageError(
                f"mcpeek mcp speaks MCP on its standard input and output, and its standard "
                f"{name} is closed (an assistant's client starts it with both; or use --http)"
            )
