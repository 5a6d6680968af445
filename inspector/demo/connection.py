"""The demo client's plumbing: a raw JSON-RPC client over a child process's stdio.

:class:`DemoClient` starts a command (mcpeek's stdio proxy in front of the demo
server, :func:`proxy_command`), writes one message per line to its stdin and
reads its stdout and stderr in threads. A request is answered by id; answers
and notifications that arrive while it waits for something else are kept for
later, so the script (:mod:`mcpeek.inspector.demo.client`) can wait for exactly what
it needs. Any failure (mcpeek gone, no answer within :data:`TIMEOUT`, the
viewer closed) is a :class:`DemoError` naming the last words on stderr.
"""

from __future__ import annotations

import contextlib
import json
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from mcpeek.inspector import __version__
from mcpeek.inspector.children import mcpeek_argv, python_module_argv
from mcpeek.inspector.demo.catalog import MCP, VERSION

DEFAULT_DELAY = 0.3  # seconds between steps: the whole conversation takes about 5 s
TIMEOUT = 15.0  # seconds to wait for any one answer
LAST_WORDS_WAIT = 2.0  # seconds to read a dying process's last output before reporting
CLIENT_INFO = {"name": "mcpeek-demo-client", "version": __version__}
CAPABILITIES: dict[str, Any] = {"elicitation": {"form": {}}}

Message = dict[str, Any]


class DemoError(Exception):
    """The conversation could not be played (mcpeek or the server failed)."""


def proxy_command(capture: Path, *, python: str = sys.executable, delay: float) -> list[str]:
    """mcpeek's stdio proxy, quiet, in front of the demo server."""
    server = python_module_argv(
        "mcpeek.inspector.demo.server", "--delay", f"{delay:g}", python=python
    )
    return mcpeek_argv("stdio", "-q", "-w", str(capture), "--", *server, python=python)


class DemoClient:
    """A raw JSON-RPC client over a child process's stdin/stdout."""

    def __init__(self, command: list[str], *, delay: float = DEFAULT_DELAY) -> None:
        self.command = command
        self.delay = delay
        self.stderr_lines: list[str] = []
        self.notifications: list[Message] = []  # every notification received, in order
        self._next_id = 1
        self._proc: subprocess.Popen[bytes] | None = None
        self._inbox: queue.Queue[Message | None] = queue.Queue()
        self._pending: list[Message] = []  # answers read while waiting for another
        self._aborted = threading.Event()
        self._closing = False  # the conversation is over: an abort now stops nothing
        self._threads: list[threading.Thread] = []

    # -- process -------------------------------------------------------------------------
    def start(self) -> None:
        try:
            self._proc = subprocess.Popen(
                self.command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,  # a terminal's Ctrl-C is the caller's to handle
            )
        except OSError as exc:
            raise DemoError(f"cannot start {self.command[0]}: {exc}") from None
        assert self._proc.stdout is not None and self._proc.stderr is not None
        for target, stream in (
            (self._read_stdout, self._proc.stdout),
            (self._read_stderr, self._proc.stderr),
        ):
            thread = threading.Thread(target=target, args=(stream,), daemon=True)
            thread.start()
            self._threads.append(thread)

    def _read_stdout(self, stream: IO[bytes]) -> None:
        for line in stream:
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if isinstance(message, dict):
                self._inbox.put(message)
        self._inbox.put(None)  # the server's stdout ended

    def _read_stderr(self, stream: IO[bytes]) -> None:
        for line in stream:
            self.stderr_lines.append(line.decode("utf-8", "replace").rstrip("\r\n"))

    def close(self, timeout: float = 10.0) -> int:
        """End of stdin; wait for mcpeek (and the server) to exit; its exit code."""
        self._closing = True
        proc = self._proc
        if proc is None:
            return 0
        if proc.stdin is not None and not proc.stdin.closed:
            with contextlib.suppress(OSError):
                proc.stdin.close()
        try:
            code = proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            code = proc.wait()
        for thread in self._threads:
            thread.join(2.0)
        return code

    def abort(self) -> None:
        """Stop now (the viewer was closed before the end): mcpeek finishes the capture.

        Once :meth:`close` has begun, the conversation is over and an abort is
        not one: mcpeek is already writing the capture's end (its ``exit``
        event may be there), and the user quit after the end, not before it.
        """
        if self._closing:
            return
        self._aborted.set()
        proc = self._proc
        if proc is not None and proc.poll() is None and proc.stdin is not None:
            with contextlib.suppress(OSError):
                proc.stdin.close()

    @property
    def aborted(self) -> bool:
        return self._aborted.is_set()

    # -- messages ------------------------------------------------------------------------
    def _write(self, message: Message) -> None:
        proc = self._proc
        if proc is None or proc.stdin is None or self.aborted:
            raise DemoError("the demo was stopped")
        try:
            proc.stdin.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")
            proc.stdin.flush()
        except (OSError, ValueError):
            # It is going or gone: read what it said last (a server that died at once
            # closes its stdin before its stdout's end is seen) before saying why.
            for thread in self._threads:
                thread.join(LAST_WORDS_WAIT)
            ended = bool(self._threads) and not self._threads[0].is_alive()
            why = "mcpeek closed its stdin" + (" (the server's stdout ended)" if ended else "")
            raise DemoError(f"{why}: {self.last_words()}") from None

    def meta(self, **extra: Any) -> dict[str, Any]:
        return {
            MCP + "protocolVersion": VERSION,
            MCP + "clientInfo": CLIENT_INFO,
            MCP + "clientCapabilities": CAPABILITIES,
            **extra,
        }

    def send_request(self, method: str, params: dict[str, Any], *, progress: bool = False) -> int:
        request_id = self._next_id
        self._next_id += 1
        meta = self.meta(progressToken=f"progress-{request_id}") if progress else self.meta()
        body = {**params, "_meta": meta}
        self._write({"jsonrpc": "2.0", "id": request_id, "method": method, "params": body})
        return request_id

    def notify(self, method: str, params: dict[str, Any]) -> None:
        self._write({"jsonrpc": "2.0", "method": method, "params": params})

    def _next(self, deadline: float, waiting_for: str) -> Message:
        remaining = deadline - time.monotonic()
        if remaining <= 0 or self.aborted:
            raise DemoError(f"no {waiting_for} within {TIMEOUT:g} s: " + self.last_words())
        try:
            message = self._inbox.get(timeout=remaining)
        except queue.Empty:
            raise DemoError(
                f"no {waiting_for} within {TIMEOUT:g} s: " + self.last_words()
            ) from None
        if message is None:
            self._inbox.put(None)  # stays ended for every later wait
            for thread in self._threads[1:]:  # let the last words (stderr) arrive
                thread.join(2.0)
            raise DemoError(f"the server's stdout ended before {waiting_for}: " + self.last_words())
        if "method" in message and "id" not in message:
            self.notifications.append(message)
        return message

    def wait_response(self, request_id: int) -> Message:
        for i, message in enumerate(self._pending):
            if message.get("id") == request_id:
                return self._pending.pop(i)
        deadline = time.monotonic() + TIMEOUT
        while True:
            message = self._next(deadline, f"answer to id {request_id}")
            if "method" in message:
                continue
            if message.get("id") == request_id:
                return message
            self._pending.append(message)

    def wait_notification(self, match: Callable[[Message], bool], what: str) -> Message:
        for message in self.notifications:
            if match(message):
                return message
        deadline = time.monotonic() + TIMEOUT
        while True:
            message = self._next(deadline, what)
            if "method" in message and "id" not in message:
                if match(message):
                    return message
            elif "method" not in message:
                self._pending.append(message)

    def call(self, method: str, params: dict[str, Any], *, progress: bool = False) -> Any:
        """Send a request and return its result (a DemoError for an error answer)."""
        response = self.wait_response(self.send_request(method, params, progress=progress))
        if "result" not in response:
            raise DemoError(f"{method} failed: {json.dumps(response.get('error'))}")
        return response["result"]

    def pause(self, factor: float = 1.0) -> None:
        if self.delay > 0 and self._aborted.wait(self.delay * factor):
            raise DemoError("the demo was stopped")

    def last_words(self) -> str:
        tail = [line for line in self.stderr_lines if line.strip()][-3:]
        return " / ".join(tail) if tail else "(nothing on stderr)"
