"""The demo server's logic: JSON-RPC messages in, answers out, over a ``send`` callable.

:class:`DemoServer` checks each request's ``_meta`` (protocol version, client
capabilities), answers the discovery, listing and reading requests at once,
keeps the ``subscriptions/listen`` streams open until the client cancels them,
and runs each ``tools/call`` in its own thread (the handlers are
:class:`~mcpeek.inspector.demo.tools.DemoTools`), so that a cancellation is read
while a tool works. Whatever thread writes, one whole message goes out at a
time. The stdio loop around it is :mod:`mcpeek.inspector.demo.server`'s.
"""

from __future__ import annotations

import json
import secrets
import sys
import threading
from collections.abc import Callable
from typing import Any

from mcpeek.inspector.demo.catalog import (
    BUILD_VERSION,
    CAPABILITIES,
    INSTRUCTIONS,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    MCP,
    METHOD_NOT_FOUND,
    NOTE_URI,
    RESULT_META,
    TOOLS,
    UNSUPPORTED_VERSION,
    VERSION,
    Message,
    RequestError,
    Send,
    complete,
)
from mcpeek.inspector.demo.tools import Call, DemoTools


def _key(request_id: Any) -> str:
    """Ids compare as JSON values: ``1`` and ``"1"`` are different requests."""
    return json.dumps(request_id, sort_keys=True)


class DemoServer(DemoTools):
    """The server's logic, over a ``send`` callable (one JSON-RPC message each).

    :meth:`handle` takes each message the client sent. Tool calls run in their
    own threads, so that a cancellation (or any other request) is read while
    they work; :meth:`join` waits for them, :meth:`close` cancels them (end of
    stdin).
    """

    def __init__(
        self,
        send: Send,
        *,
        delay: float = 0.3,
        log: Callable[[str], None] | None = None,
        secret: bytes | None = None,
    ) -> None:
        self._lock = threading.Lock()
        self._raw_send = send
        self.delay = delay
        self._log = log or log_to_stderr
        self._secret = secret if secret is not None else secrets.token_bytes(32)
        self.notes = ["write the release notes", "tag v" + BUILD_VERSION]
        self.deployed: dict[str, str] = {}  # env → version
        self._calls: dict[str, Call] = {}
        self._threads: list[threading.Thread] = []
        self._listens: dict[str, tuple[Any, list[str]]] = {}  # listen id → (id, uris)

    # -- plumbing ------------------------------------------------------------------------
    def send(self, message: Message) -> None:
        with self._lock:  # one whole line at a time, whichever thread writes
            self._raw_send(message)

    def log(self, text: str) -> None:
        self._log(text)

    def reply(self, request_id: Any, result: dict[str, Any]) -> None:
        self.send({"jsonrpc": "2.0", "id": request_id, "result": result})

    def error(self, request_id: Any, code: int, message: str, data: Any = None) -> None:
        error: dict[str, Any] = {"code": code, "message": message}
        if data is not None:
            error["data"] = data
        self.send({"jsonrpc": "2.0", "id": request_id, "error": error})

    def handle(self, message: Any) -> None:
        if not isinstance(message, dict) or not isinstance(message.get("method"), str):
            return  # a response or garbage: nothing to answer
        method: str = message["method"]
        params = message.get("params")
        params = params if isinstance(params, dict) else {}
        if "id" not in message:
            if method == "notifications/cancelled":
                self._cancelled(params)
            return
        request_id = message["id"]
        try:
            self._check_meta(params)
            result = self._dispatch(request_id, method, params)
        except RequestError as exc:
            self.error(request_id, exc.code, str(exc), exc.data)
            return
        if result is not None:
            self.reply(request_id, result)

    def join(self, timeout: float | None = None) -> None:
        """Wait for the tool calls still running."""
        with self._lock:
            threads = list(self._threads)
        for thread in threads:
            thread.join(timeout)

    def close(self) -> None:
        """The client went away: stop every call."""
        with self._lock:
            calls = list(self._calls.values())
        for call in calls:
            call.cancelled.set()
        self.join(5.0)

    # -- requests ------------------------------------------------------------------------
    @staticmethod
    def _check_meta(params: dict[str, Any]) -> None:
        meta = params.get("_meta")
        if not isinstance(meta, dict):
            raise RequestError(INVALID_PARAMS, "missing _meta (protocol version, capabilities)")
        version = meta.get(MCP + "protocolVersion")
        if version is None:
            raise RequestError(INVALID_PARAMS, f"missing _meta {MCP}protocolVersion")
        if version != VERSION:
            raise RequestError(
                UNSUPPORTED_VERSION,
                f"unsupported protocol version {version!r}",
                {"supported": [VERSION], "requested": str(version)},
            )
        if not isinstance(meta.get(MCP + "clientCapabilities"), dict):
            raise RequestError(INVALID_PARAMS, f"missing _meta {MCP}clientCapabilities")

    def _dispatch(
        self, request_id: Any, method: str, params: dict[str, Any]
    ) -> dict[str, Any] | None:
        if method == "server/discover":
            return complete(
                {
                    "supportedVersions": [VERSION],
                    "capabilities": CAPABILITIES,
                    "instructions": INSTRUCTIONS,
                    "ttlMs": 60_000,
                    "cacheScope": "public",
                }
            )
        if method == "tools/list":
            return complete({"tools": TOOLS, "ttlMs": 60_000, "cacheScope": "public"})
        if method == "resources/list":
            resource = {
                "uri": NOTE_URI,
                "name": "todo",
                "title": "To do",
                "description": "The release checklist.",
                "mimeType": "text/markdown",
            }
            return complete({"resources": [resource], "ttlMs": 0, "cacheScope": "private"})
        if method == "resources/read":
            return self._read(params)
        if method == "subscriptions/listen":
            self._listen(request_id, params)
            return None  # the stream stays open: no response until it ends
        if method == "tools/call":
            self._start_call(request_id, params)
            return None  # answered by the call's thread
        raise RequestError(METHOD_NOT_FOUND, f"method not found: {method}")

    def _read(self, params: dict[str, Any]) -> dict[str, Any]:
        uri = params.get("uri")
        if uri != NOTE_URI:
            raise RequestError(INVALID_PARAMS, f"unknown resource {uri!r}", {"uri": uri})
        with self._lock:
            text = "# To do\n\n" + "".join(f"- {note}\n" for note in self.notes)
        body = {
            "contents": [{"uri": NOTE_URI, "mimeType": "text/markdown", "text": text}],
            "ttlMs": 0,
            "cacheScope": "private",
        }
        # DELIBERATE VIOLATION result.result-type-missing: a 2026-07-28 server MUST
        # put resultType in every result; this one leaves it out.
        return {**body, "_meta": RESULT_META}

    def _listen(self, request_id: Any, params: dict[str, Any]) -> None:
        wanted = params.get("notifications")
        wanted = wanted if isinstance(wanted, dict) else {}
        uris = wanted.get("resourceSubscriptions")
        agreed = [u for u in uris if u == NOTE_URI] if isinstance(uris, list) else []
        with self._lock:
            self._listens[_key(request_id)] = (request_id, agreed)
        # Only resource subscriptions are supported: the acknowledgment says so.
        honored: dict[str, Any] = {"resourceSubscriptions": agreed} if agreed else {}
        self.send(
            {
                "jsonrpc": "2.0",
                "method": "notifications/subscriptions/acknowledged",
                "params": {"_meta": {MCP + "subscriptionId": request_id}, "notifications": honored},
            }
        )

    def _cancelled(self, params: dict[str, Any]) -> None:
        key = _key(params.get("requestId"))
        reason = params.get("reason")
        with self._lock:
            call = self._calls.get(key)
            listen = self._listens.pop(key, None)
        if call is not None:
            call.cancelled.set()
            self.log(f"{call.name} (id {call.id}) cancelled by the client: {reason or 'no reason'}")
        elif listen is not None:
            self.log(f"subscription {listen[0]} closed by the client")

    # -- tools ---------------------------------------------------------------------------
    def _start_call(self, request_id: Any, params: dict[str, Any]) -> None:
        name = params.get("name")
        handler = self._tools().get(name) if isinstance(name, str) else None
        if handler is None:
            raise RequestError(INVALID_PARAMS, f"unknown tool: {name!r}")
        call = Call(request_id, params, self.send)
        thread = threading.Thread(
            target=self._run, args=(call, handler), name=f"call-{request_id}", daemon=True
        )
        with self._lock:
            self._calls[_key(request_id)] = call
            self._threads = [t for t in self._threads if t.is_alive()]
            self._threads.append(thread)
        thread.start()

    def _run(self, call: Call, handler: Callable[[Call], dict[str, Any] | None]) -> None:
        try:
            try:
                result = handler(call)
            except RequestError as exc:
                if not call.cancelled.is_set():
                    self.error(call.id, exc.code, str(exc), exc.data)
                return
            except Exception as exc:  # a bug of ours: the client still gets an answer
                if not call.cancelled.is_set():
                    self.error(call.id, INTERNAL_ERROR, f"internal error: {exc}")
                return
            # A cancelled call gets no response (stdio: MUST NOT send anything more for it).
            if result is not None and not call.cancelled.is_set():
                self.reply(call.id, result)
        finally:
            with self._lock:
                self._calls.pop(_key(call.id), None)


def log_to_stderr(text: str) -> None:
    print(f"demo-server: {text}", file=sys.stderr, flush=True)
