"""Run a mock server from Python: over stdio, or on HTTP in a background thread.

    from mcpeek.inspector.replay import MockServer, start_http, serve_stdio, stdio_command

    server = MockServer.from_capture("captures/x.jsonl", timing="fast")

    # HTTP: a loopback listener on a free port, in a daemon thread
    with start_http(server) as mock:
        run_client(mock.url)                 # "http://127.0.0.1:PORT/mcp"
    mock.session_misses                      # what the client asked that was not recorded

    # stdio: a client under test spawns a command line
    argv = stdio_command("captures/x.jsonl", "--timing", "fast")
    # → [sys.executable, "-I", "-m", "mcpeek", "serve", "captures/x.jsonl", "--timing", "fast"]

    # or serve this process's own stdin/stdout (blocks until stdin ends)
    serve_stdio(server)

``start_http`` takes ``host``/``port`` (default ``127.0.0.1:0``), a
:class:`~mcpeek.inspector.replay.tape.Tape` to record or check the session, and
``forward_url`` for ``on_miss="forward"``. ``stop()`` (or leaving the
``with`` block) shuts the listener down and closes the tape.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from types import TracebackType
from typing import Any

from mcpeek.inspector.children import mcpeek_argv
from mcpeek.inspector.proxy.guard import RequestGuard
from mcpeek.inspector.replay.mock import MockServer
from mcpeek.inspector.replay.tape import Tape

START_TIMEOUT = 10.0


def stdio_command(capture: str, *options: str) -> list[str]:
    """The command line that serves ``capture`` on stdio (for a client to spawn)."""
    return mcpeek_argv("serve", str(capture), *options)


def serve_stdio(server: MockServer, **options: Any) -> list[str]:
    """Serve one client on this process's stdin/stdout; returns the misses."""
    from mcpeek.inspector.replay.mock_stdio import run_stdio

    session = asyncio.run(run_stdio(server, **options))
    return session.misses


class RunningHttp:
    """A mock server listening in a background thread (see :func:`start_http`)."""

    def __init__(self, server: MockServer, host: str, port: int, **options: Any) -> None:
        from mcpeek.inspector.replay.mock_http import HttpMock

        self.tape: Tape = options.pop("tape", None) or Tape(transport="http")
        guard = RequestGuard(port, allow_remote=options.pop("allow_remote", False))
        self.mock = HttpMock(server, guard, tape=self.tape, **options)
        self.url = ""
        self._host, self._port = host, port
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._thread = threading.Thread(target=self._run, name="mcpeek-serve", daemon=True)

    def start(self) -> RunningHttp:
        self._thread.start()
        if not self._ready.wait(START_TIMEOUT):
            raise RuntimeError("the mock server did not start listening in time")
        if self._error is not None:
            raise self._error
        return self

    def _run(self) -> None:
        from mcpeek.inspector.replay.mock_http import serve_http

        async def main() -> None:
            self._loop = asyncio.get_running_loop()
            self._stop = asyncio.Event()

            def listening(url: str) -> None:
                self.url = url
                self._ready.set()

            await serve_http(self.mock, self._host, self._port, self._stop, listening)

        try:
            asyncio.run(main())
        except BaseException as exc:  # reported to the starting thread
            self._error = exc
        finally:
            self._ready.set()

    @property
    def session_misses(self) -> list[str]:
        sessions = [c.session for c in self.mock.conversations()]
        return [miss for session in sessions for miss in session.misses]

    def stop(self, timeout: float = 10.0) -> None:
        loop, stop = self._loop, self._stop
        if loop is not None and stop is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop already ended
                loop.call_soon_threadsafe(stop.set)
        self._thread.join(timeout)
        self.tape.close()

    def __enter__(self) -> RunningHttp:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def start_http(
    server: MockServer, host: str = "127.0.0.1", port: int = 0, **options: Any
) -> RunningHttp:
    """Start serving ``server`` on HTTP in a daemon thread; returns once it listens."""
    return RunningHttp(server, host, port, **options).start()
