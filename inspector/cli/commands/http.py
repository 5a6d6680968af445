"""``mcpeek http --upstream URL``: a reverse proxy for a Streamable HTTP MCP server.

Point the client at the URL mcpeek prints (the upstream's path on mcpeek's
own address) instead of the server. mcpeek listens on 127.0.0.1 unless told
otherwise (a non-loopback --listen needs --allow-remote), refuses requests
whose Host or Origin is not its own loopback address (DNS rebinding), and
prints one line per flow and per violation on stderr while it runs. Stop it
with Ctrl-C.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
from pathlib import Path
from urllib.parse import urlsplit

from aiohttp import web

from inspector.capture.writer import CaptureWriter
from inspector.cli.base import Command, UsageError
from inspector.cli.live import LiveChecks, record_while
from inspector.paths import default_capture_path
from inspector.pipeline import Recorder
from inspector.proxy.console import Console
from inspector.proxy.guard import RequestGuard, is_loopback_host, parse_listen
from inspector.proxy.http import HttpRelay
from inspector.records import Event

DEFAULT_LISTEN = "127.0.0.1:6280"


class HttpCommand(Command):
    name = "http"
    help = "reverse-proxy a Streamable HTTP MCP server: relay, record and check its traffic"
    description = __doc__ or ""

    def configure(self, parser: argparse.ArgumentParser) -> None:
        add = parser.add_argument
        add("--upstream", required=True, metavar="URL", help="the MCP server's URL")
        add(
            "--listen",
            default=DEFAULT_LISTEN,
            metavar="HOST:PORT",
            help=f"where to listen (default: {DEFAULT_LISTEN}; port 0 picks a free one)",
        )
        add(
            "-w",
            "--write",
            metavar="FILE",
            type=Path,
            help="capture file to write (default: a new file in the capture directory)",
        )
        add(
            "--no-tui",
            action="store_true",
            help="print flows and violations on stderr (the only mode until the TUI lands)",
        )
        add(
            "--allow-remote",
            action="store_true",
            help="allow a non-loopback --listen, and requests for any Host",
        )
        add(
            "--allow-origin",
            action="append",
            default=[],
            metavar="ORIGIN",
            help="also accept browser requests from this Origin (repeatable)",
        )
        add("--no-redact", action="store_true", help="keep secret header values in the capture")
        add(
            "--redact-header",
            action="append",
            default=[],
            metavar="NAME",
            help="also redact this header's values (repeatable)",
        )
        add(
            "--preserve-host",
            action="store_true",
            help="send the client's Host header upstream instead of the upstream's",
        )
        add(
            "--no-rewrite-resource",
            action="store_true",
            help="relay OAuth protected-resource metadata and WWW-Authenticate unchanged",
        )
        add("--no-check", action="store_true", help="do not run the spec rules live")
        add("-q", "--quiet", action="store_true", help="print nothing on stderr but errors")

    def run(self, args: argparse.Namespace) -> int:
        try:
            host, port = parse_listen(args.listen)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        if not is_loopback_host(host) and not args.allow_remote:
            raise UsageError(
                f"--listen {args.listen}: not a loopback address; mcpeek would be "
                "reachable from the network (add --allow-remote if you mean it)"
            )
        upstream = args.upstream
        parts = urlsplit(upstream)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise UsageError(f"--upstream {upstream!r}: expected an http:// or https:// URL")
        path = args.write or default_capture_path()
        try:
            writer = CaptureWriter(
                path,
                transport="http",
                target=upstream,
                redact=not args.no_redact,
                extra_redacted=args.redact_header,
                threaded=True,
            )
        except OSError as exc:
            raise UsageError(f"cannot write the capture {path}: {exc.strerror or exc}") from None
        console = Console(quiet=args.quiet)
        live = LiveChecks(writer, console.say, checks=not args.no_check, flows=not args.quiet)

        def internal_error(exc: BaseException) -> None:
            console.say(f"internal error while recording ({type(exc).__name__}: {exc})", force=True)

        recorder = Recorder(writer, on_error=internal_error)
        try:
            asyncio.run(
                record_while(
                    writer,
                    live,
                    lambda: _serve(args, host, port, upstream, recorder, console),
                    internal_error,
                    console,
                )
            )
        except OSError as exc:
            raise UsageError(f"cannot listen on {args.listen}: {exc.strerror or exc}") from None
        finally:
            try:
                writer.close()
            except OSError as exc:
                console.say(f"could not finish the capture {path}: {exc}", force=True)
        console.say(f"capture saved to {path}")
        console.close()
        return 0


async def _serve(
    args: argparse.Namespace,
    host: str,
    port: int,
    upstream: str,
    recorder: Recorder,
    console: Console,
) -> None:
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    guard = RequestGuard(port, allow_remote=args.allow_remote, allowed_origins=args.allow_origin)
    async with HttpRelay(
        upstream,
        recorder.emit,
        guard,
        preserve_host=args.preserve_host,
        rewrite_resource=not args.no_rewrite_resource,
    ) as relay:
        runner = web.AppRunner(relay.app(), handler_cancellation=True, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, host, port)
        await site.start()
        server = site._server
        sockets = getattr(server, "sockets", None) or []
        actual = sockets[0].getsockname()[1] if sockets else port
        guard.port = actual
        shown_host = f"[{host}]" if ":" in host else host
        relay.public_origin = f"http://{shown_host}:{actual}"
        recorder.emit([Event(event="listen", addr=f"{shown_host}:{actual}")])
        target_path = urlsplit(upstream).path or "/"
        console.say(f"proxying {relay.public_origin}{target_path} -> {upstream}")
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)

        try:
            await stop.wait()
        finally:
            await relay.close_exchanges()
            await runner.cleanup()
