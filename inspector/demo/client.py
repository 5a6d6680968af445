"""The demo's scripted MCP client: one paced 2026-07-28 conversation, through mcpeek.

It starts the real stdio proxy as a subprocess, with the demo server behind it::

    python -m inspector stdio -q -w CAPTURE -- python -m inspector.demo.server

and plays, one step at a time with a short pause between steps (so that a live
view shows the conversation arriving):

 1. ``server/discover``
 2. ``tools/list``
 3. ``resources/list``
 4. ``subscriptions/listen`` for ``demo://notes/todo.md`` (acknowledged; stays open)
 5. ``tools/call build`` with a ``progressToken``: three progress notifications
 6. ``tools/call deploy``: ``input_required`` with an ``elicitation/create``
    input request; the client "asks the user", then retries (a new id) with
    ``inputResponses`` and the server's ``requestState``: complete
 7. ``tools/call status``: the server's structuredContent breaks its outputSchema
 8. ``tools/call add_note``: a ``notifications/resources/updated`` on the subscription
 9. ``resources/read`` of the note: the server's result lacks ``resultType``
10. ``tools/call search``: slow; after its first progress notification the client
    sends ``notifications/cancelled``, and the server stops without answering
11. ``notifications/cancelled`` for the subscription, then end of stdin

Every request carries the modern ``_meta`` (protocol version, client info,
client capabilities with form elicitation); ids are 1, 2, 3… The client side
is conformant: whatever a linter finds, the server did (on purpose).

Run on its own:  python -m inspector.demo.client [-w CAPTURE] [--delay SECONDS]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from inspector import __version__
from inspector.demo.server import MCP, NOTE_URI, VERSION

DEFAULT_DELAY = 0.3  # seconds between steps: the whole conversation takes about 5 s
TIMEOUT = 15.0  # seconds to wait for any one answer
CLIENT_INFO = {"name": "mcpeek-demo-client", "version": __version__}
CAPABILITIES: dict[str, Any] = {"elicitation": {"form": {}}}

Message = dict[str, Any]


class DemoError(Exception):
    """The conversation could not be played (mcpeek or the server failed)."""


def proxy_command(capture: Path, *, python: str = sys.executable, delay: float) -> list[str]:
    """mcpeek's stdio proxy, quiet, in front of the demo server."""
    return [
        python,
        "-m",
        "inspector",
        "stdio",
        "-q",
        "-w",
        str(capture),
        "--",
        python,
        "-m",
        "inspector.demo.server",
        "--delay",
        f"{delay:g}",
    ]


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
        """Stop now (the viewer was closed before the end): mcpeek finishes the capture."""
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
            raise DemoError("mcpeek closed its stdin: " + self.last_words()) from None

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


def answer_input_requests(requests: dict[str, Any]) -> dict[str, Any]:
    """What the scripted "user" answers: yes to every confirmation form."""
    answers: dict[str, Any] = {}
    for key, request in requests.items():
        if not isinstance(request, dict) or request.get("method") != "elicitation/create":
            raise DemoError(f"unexpected input request {key!r}: {json.dumps(request)}")
        schema = (request.get("params") or {}).get("requestedSchema") or {}
        properties = schema.get("properties") or {}
        content = {name: True for name, spec in properties.items() if spec.get("type") == "boolean"}
        answers[key] = {"action": "accept", "content": content}
    return answers


def converse(client: DemoClient) -> None:
    """The scripted conversation (see the module's docstring)."""
    client.call("server/discover", {})
    client.pause()
    client.call("tools/list", {})
    client.pause()
    client.call("resources/list", {})
    client.pause()

    listen = client.send_request(
        "subscriptions/listen", {"notifications": {"resourceSubscriptions": [NOTE_URI]}}
    )
    client.wait_notification(
        lambda m: (
            m.get("method") == "notifications/subscriptions/acknowledged"
            and _subscription(m) == listen
        ),
        "the subscription's acknowledgment",
    )
    client.pause()

    client.call("tools/call", {"name": "build", "arguments": {"target": "app"}}, progress=True)
    client.pause()

    deploy = {"name": "deploy", "arguments": {"env": "staging"}}
    first = client.call("tools/call", deploy)
    if first.get("resultType") != "input_required":
        raise DemoError(f"deploy did not ask for input: {json.dumps(first)}")
    client.pause(2)  # the user reads the question and clicks "Deploy now"
    retry = {
        **deploy,
        "inputResponses": answer_input_requests(first.get("inputRequests") or {}),
        "requestState": first["requestState"],
    }
    client.call("tools/call", retry)
    client.pause()

    client.call("tools/call", {"name": "status", "arguments": {"env": "staging"}})
    client.pause()

    client.call("tools/call", {"name": "add_note", "arguments": {"text": "announce the release"}})
    client.pause()
    client.call("resources/read", {"uri": NOTE_URI})
    client.pause()

    search = client.send_request(
        "tools/call", {"name": "search", "arguments": {"query": "rollback plan"}}, progress=True
    )
    token = f"progress-{search}"
    client.wait_notification(
        lambda m: (
            m.get("method") == "notifications/progress"
            and (m.get("params") or {}).get("progressToken") == token
        ),
        "the search's first progress",
    )
    client.pause(2)  # the user gives up waiting
    client.notify(
        "notifications/cancelled", {"requestId": search, "reason": "the user stopped the search"}
    )
    client.pause()
    client.notify("notifications/cancelled", {"requestId": listen, "reason": "the demo is over"})
    client.pause(0.5)


def _subscription(message: Message) -> Any:
    meta = (message.get("params") or {}).get("_meta") or {}
    return meta.get(MCP + "subscriptionId")


def run_demo(
    capture: Path, *, delay: float = DEFAULT_DELAY, python: str = sys.executable
) -> DemoClient:
    """Play the whole conversation through ``mcpeek stdio`` into ``capture``.

    Returns the finished client; raises :class:`DemoError` when the conversation
    could not be played or mcpeek did not exit 0.
    """
    client = DemoClient(proxy_command(capture, python=python, delay=delay * 0.75), delay=delay)
    play(client)
    return client


def play(client: DemoClient) -> None:
    """Start ``client``, converse, close; a DemoError says what went wrong."""
    client.start()
    try:
        converse(client)
    except DemoError:
        client.close(timeout=5.0)
        raise
    code = client.close()
    if code != 0 and not client.aborted:
        raise DemoError(f"mcpeek exited with code {code}: {client.last_words()}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m inspector.demo.client",
        description="Play mcpeek's demo conversation through mcpeek stdio.",
    )
    parser.add_argument("-w", "--write", type=Path, metavar="FILE", help="capture file")
    parser.add_argument("--delay", type=float, default=DEFAULT_DELAY, metavar="SECONDS")
    args = parser.parse_args(argv)
    capture = args.write
    if capture is None:
        fd, name = tempfile.mkstemp(prefix="mcpeek-demo-", suffix=".jsonl")
        os.close(fd)
        capture = Path(name)
    try:
        run_demo(capture, delay=max(0.0, args.delay))
    except DemoError as exc:
        print(f"demo client: {exc}", file=sys.stderr)
        return 1
    print(capture)
    return 0


if __name__ == "__main__":
    sys.exit(main())
