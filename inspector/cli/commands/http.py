"""``mcpeek http --upstream URL``: a reverse proxy for a Streamable HTTP MCP server.

Point the client at the URL mcpeek prints (the upstream's path on mcpeek's
own address) instead of the server. mcpeek listens on 127.0.0.1 unless told
otherwise (a non-loopback --listen needs --allow-remote), refuses requests
whose Host or Origin is not its own loopback address (DNS rebinding). In a
terminal it shows the traffic live in the viewer (``mcpeek view``'s app, on
the capture it is writing; quit with q); with ``--no-tui``, or when its
output is not a terminal, it prints one line per flow and per violation on
stderr instead, until Ctrl-C.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from aiohttp import web

from mcpeek.inspector.capture.redact_targets import redacted_url
from mcpeek.inspector.cli.acting import add_action_options, build_actor, with_control
from mcpeek.inspector.cli.base import (
    Command,
    UsageError,
    add_slow_option,
    on_a_terminal,
    slow_seconds,
)
from mcpeek.inspector.cli.live import LiveChecks, record_while
from mcpeek.inspector.cli.otlp_live import OtlpFollower, add_otlp_option
from mcpeek.inspector.cli.recording import (
    RecordingErrors,
    add_capture_options,
    open_capture,
    start_run,
)
from mcpeek.inspector.cli.urls import check_http_url, check_origins, is_own_address
from mcpeek.inspector.paths import default_capture_path
from mcpeek.inspector.pipeline import Recorder
from mcpeek.inspector.proxy.console import Console, library_logs
from mcpeek.inspector.proxy.guard import RequestGuard, is_loopback_host, parse_listen
from mcpeek.inspector.proxy.http import HttpRelay
from mcpeek.inspector.proxy.http_act import ActingHttpRelay
from mcpeek.inspector.proxy.listener import DEFAULT_HEADER_TIMEOUT
from mcpeek.inspector.records import Event

if TYPE_CHECKING:
    from mcpeek.inspector.act.actor import Actor

DEFAULT_LISTEN = "127.0.0.1:6280"
CAPTURE_INCOMPLETE = 2  # the run's output is lost in part: neither "ok" nor "findings" (1)


class HttpCommand(Command):
    name = "http"
    order = 20
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
        add_capture_options(parser)
        add(
            "--no-tui",
            action="store_true",
            help="print flows and violations on stderr instead of showing the viewer",
        )
        remote = "allow a non-loopback --listen, and requests for any Host"
        add("--allow-remote", action="store_true", help=remote)
        origin = "also accept browser requests from this Origin, scheme://host[:port] (repeatable)"
        add("--allow-origin", action="append", default=[], metavar="ORIGIN", help=origin)
        add(
            "--no-redact",
            action="store_true",
            help="keep credentials and recognisable secrets in the capture",
        )
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
        add(
            "--header-timeout",
            type=float,
            default=DEFAULT_HEADER_TIMEOUT,
            metavar="SECONDS",
            help="close a connection that has not sent a complete request head in this "
            f"time (default: {DEFAULT_HEADER_TIMEOUT:g})",
        )
        add_slow_option(parser, "make conspicuous in the viewer (--no-tui: print a line for)")
        add_action_options(parser)
        add("--no-check", action="store_true", help="do not run the spec rules live")
        add("-q", "--quiet", action="store_true", help="print nothing on stderr but errors")
        add_otlp_option(parser)

    def run(self, args: argparse.Namespace) -> int:
        slow = slow_seconds(args)
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
        check_http_url("--upstream", upstream)
        check_origins("--allow-origin", args.allow_origin)
        if not args.header_timeout > 0:
            raise UsageError(f"--header-timeout {args.header_timeout:g}: expected a number > 0")
        otlp = OtlpFollower(args.otlp)
        tui = not args.no_tui and on_a_terminal()
        # The viewer owns the terminal: nothing may be printed under it (the actor's
        # words included: the viewer shows what is held).
        console = Console(quiet=args.quiet or tui)
        actor = build_actor(args, lambda text: console.say(text, force=not tui))
        path = args.write or default_capture_path(home=args.home)
        writer = open_capture(
            path,
            force=args.force,
            transport="http",
            target=upstream,  # recorded without its password and its secret parameters
            redact=not args.no_redact,
            extra_redacted=args.redact_header,
        )
        path = writer.path  # the name it took ({n}, {pid})
        live = LiveChecks(
            writer,
            console.say,
            checks=not args.no_check,
            flows=not (args.quiet or tui),
            slow=slow,
        )

        internal_error = RecordingErrors(
            writer, lambda text: console.say(text, force=True), on_cut=live.capture_cut
        )
        recorder = Recorder(writer, on_error=internal_error)
        stop = asyncio.Event()
        ready = asyncio.Event()

        def started() -> None:
            start_run(writer, otlp, quiet=tui)

        def proxy() -> Coroutine[None, None, None]:
            return record_while(
                live,
                with_control(
                    lambda: _serve(
                        args, host, port, upstream, recorder, console, stop, ready, started, actor
                    ),
                    actor,
                    path,
                    lambda text: console.say(text, force=not tui),
                ),
                console,
            )

        async def headless() -> None:  # Ctrl-C/SIGTERM stop it at once (asyncio.run's may not)
            for sig in (signal.SIGINT, signal.SIGTERM):
                asyncio.get_running_loop().add_signal_handler(sig, stop.set)
            await proxy()

        try:
            with library_logs(console):  # aiohttp's tracebacks never reach stderr
                if not tui:
                    asyncio.run(headless())
                else:
                    asyncio.run(_with_viewer(proxy(), stop, ready, path, slow))
        except (OSError, UsageError) as exc:
            if isinstance(exc, UsageError):
                raise
            raise UsageError(f"cannot listen on {args.listen}: {exc.strerror or exc}") from None
        finally:
            if writer.committed:  # it listened: the capture is kept whatever came next
                writer.close()
            else:  # it never listened (an error, a Ctrl-C): no capture to keep, and
                writer.discard()  # the one --force would replace stays
            otlp.finish()
        if internal_error.incomplete:  # said once above; the exit code must not say "ok"
            console.say(f"the capture {path} is incomplete", force=True)
            console.close()
            return CAPTURE_INCOMPLETE
        console.say(f"capture saved to {path}", force=tui)  # the viewer is gone: say where
        console.close()
        return 0


async def _serve(
    args: argparse.Namespace,
    host: str,
    port: int,
    upstream: str,
    recorder: Recorder,
    console: Console,
    stop: asyncio.Event,
    ready: asyncio.Event,
    started: Callable[[], None],
    actor: Actor | None = None,
) -> None:
    guard = RequestGuard(port, allow_remote=args.allow_remote, allowed_origins=args.allow_origin)
    options: dict[str, Any] = {
        "preserve_host": args.preserve_host,
        "rewrite_resource": not args.no_rewrite_resource,
        "header_timeout": args.header_timeout,
    }
    async with (
        HttpRelay(upstream, recorder.emit, guard, **options)
        if actor is None
        else ActingHttpRelay(upstream, recorder.emit, guard, decide=actor.decide, **options)
    ) as relay:
        if actor is not None and isinstance(relay, ActingHttpRelay):
            actor.injector.deliver = relay.injector.deliver  # the control channel may inject
        runner = web.ServerRunner(relay.server())
        await runner.setup()
        site = web.TCPSite(runner, host, port)
        await site.start()
        server = site._server
        sockets = getattr(server, "sockets", None) or []
        actual = sockets[0].getsockname()[1] if sockets else port
        if is_own_address(upstream, host, actual):  # checked on the port bound (:0 too)
            await runner.cleanup()
            raise UsageError(
                f"--upstream {redacted_url(upstream)} is mcpeek's own --listen address: "
                "each request would be relayed back to mcpeek, without end"
            )
        guard.port = actual
        shown_host = f"[{host}]" if ":" in host else host
        relay.public_origin = f"http://{shown_host}:{actual}"
        recorder.emit([Event(event="listen", addr=f"{shown_host}:{actual}")])
        started()  # the run has started
        target_path = urlsplit(upstream).path or "/"
        console.say(f"proxying {relay.public_origin}{target_path} -> {redacted_url(upstream)}")
        console.say(f"recording to {recorder.writer.path}")  # as stdio does; saved at the end
        ready.set()
        try:
            await stop.wait()
        finally:
            await relay.close_exchanges()
            await runner.cleanup()


async def _with_viewer(
    proxy: Coroutine[None, None, None],
    stop: asyncio.Event,
    ready: asyncio.Event,
    path: Path,
    slow: float,
) -> None:
    """Run the proxy and, once it listens, the viewer on its capture; quitting
    the viewer stops the proxy (a proxy that fails ends the viewer)."""
    from mcpeek.tui.app import McpeekApp

    task = asyncio.ensure_future(proxy)
    waiter = asyncio.ensure_future(ready.wait())
    await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
    if task.done():
        waiter.cancel()
        return task.result()  # raises what stopped the proxy from starting
    app = McpeekApp([path], follow=True, recheck_rules=False, runs_proxy=True, slow=slow)
    task.add_done_callback(lambda _: app.exit())
    await app.run_async()
    stop.set()
    await task
