"""The demo's MCP server: 2026-07-28, raw JSON-RPC over stdio, no SDK.

A small "release desk" server, written by hand so that every byte it sends is
chosen (and so that the demo needs nothing beyond mcpeek's own dependencies):

=============================  ================================================
``server/discover``            the modern handshake: version, capabilities
``tools/list``                 ``build``, ``deploy``, ``status``, ``add_note``,
                               ``search``
``tools/call build``           ``notifications/progress`` 1/3, 2/3, 3/3, then
                               the result (paced, ``--delay``)
``tools/call deploy``          multi round-trip: an ``input_required`` result
                               asking for an ``elicitation/create``
                               confirmation, with a signed ``requestState``;
                               the retry with ``inputResponses`` completes
``tools/call add_note``        appends to ``demo://notes/todo.md`` and sends
                               ``notifications/resources/updated`` to every
                               ``subscriptions/listen`` that asked for it
``tools/call search``          slow: one progress notification, then it waits
                               (up to 20 s) for a ``notifications/cancelled``,
                               and stops without answering
``resources/list`` / ``read``  the to-do note
``subscriptions/listen``       acknowledged at once; stays open until the
                               client cancels it
=============================  ================================================

It logs to stderr (``demo-server: …``), the 2026-07-28 way: protocol logging
(``notifications/message``) is deprecated in this version.

**Two deliberate spec violations**, so that the demo has something to flag.
Everything else is meant to be conformant (``mcpeek lint`` of a demo capture
reports exactly these two):

* ``tools/call status``: ``structuredContent.healthy`` is the string
  ``"yes"`` although the tool's ``outputSchema`` says boolean
  (rule ``tools.output-schema``);
* ``resources/read``: the result has no ``resultType``
  (rule ``result.result-type-missing``).

Requests without the required ``_meta`` get -32602, an unsupported protocol
version -32022, unknown methods -32601. The server exits at the end of stdin.

Run:  python -m inspector.demo.server [--delay SECONDS]
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import hmac
import json
import secrets
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from inspector import __version__

VERSION = "2026-07-28"
MCP = "io.modelcontextprotocol/"
SERVER_INFO = {"name": "mcpeek-demo-server", "version": __version__}
RESULT_META = {MCP + "serverInfo": SERVER_INFO}
NOTE_URI = "demo://notes/todo.md"
SEARCH_SECONDS = 20.0  # how long `search` works before it answers (it is meant to be cancelled)
STATE_TTL = 300.0  # seconds a deploy confirmation's requestState stays valid
BUILD_STEPS = ("resolving dependencies", "compiling", "packaging")
BUILD_VERSION = "1.4.2"

# JSON-RPC / MCP error codes
INVALID_PARAMS = -32602
METHOD_NOT_FOUND = -32601
INTERNAL_ERROR = -32603
UNSUPPORTED_VERSION = -32022

Message = dict[str, Any]
Send = Callable[[Message], None]


def _object(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required}


STRING = {"type": "string"}
TOOLS: list[dict[str, Any]] = [
    {
        "name": "build",
        "title": "Build",
        "description": "Build a release artifact of the project, reporting progress.",
        "inputSchema": _object({"target": STRING}, ["target"]),
        "outputSchema": _object(
            {"artifact": STRING, "steps": {"type": "integer"}}, ["artifact", "steps"]
        ),
    },
    {
        "name": "deploy",
        "title": "Deploy",
        "description": "Deploy the last build; asks the user to confirm first.",
        "inputSchema": _object(
            {"env": {"type": "string", "enum": ["staging", "production"]}}, ["env"]
        ),
        "annotations": {"destructiveHint": True, "openWorldHint": False},
    },
    {
        "name": "status",
        "title": "Status",
        "description": "Report the health of a deployment.",
        "inputSchema": _object({"env": STRING}, ["env"]),
        "outputSchema": _object(
            {"env": STRING, "version": STRING, "healthy": {"type": "boolean"}},
            ["env", "version", "healthy"],
        ),
        "annotations": {"readOnlyHint": True},
    },
    {
        "name": "add_note",
        "title": "Add a note",
        "description": f"Append a line to the to-do note ({NOTE_URI}).",
        "inputSchema": _object({"text": STRING}, ["text"]),
    },
    {
        "name": "search",
        "title": "Search",
        "description": "Search every note (slow: it takes a while; cancel it if you must).",
        "inputSchema": _object({"query": STRING}, ["query"]),
        "annotations": {"readOnlyHint": True},
    },
]
CAPABILITIES = {"tools": {}, "resources": {"subscribe": True}}
INSTRUCTIONS = "A toy release desk: build, confirm and deploy, then check its status."


class RequestError(Exception):
    """Answered as a JSON-RPC error."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.data = data


def complete(body: dict[str, Any]) -> dict[str, Any]:
    """A final result: ``resultType`` and the server's identity in ``_meta``."""
    return {**body, "resultType": "complete", "_meta": RESULT_META}


def text_result(text: str, structured: Any = None) -> dict[str, Any]:
    body: dict[str, Any] = {"content": [{"type": "text", "text": text}], "isError": False}
    if structured is not None:
        body["structuredContent"] = structured
    return complete(body)


def _key(request_id: Any) -> str:
    """Ids compare as JSON values: ``1`` and ``"1"`` are different requests."""
    return json.dumps(request_id, sort_keys=True)


class Call:
    """One ``tools/call`` being worked on, in its own thread."""

    def __init__(self, request_id: Any, params: dict[str, Any], send: Send) -> None:
        self.id = request_id
        self.params = params
        arguments = params.get("arguments")
        self.arguments: dict[str, Any] = arguments if isinstance(arguments, dict) else {}
        meta = params.get("_meta")
        self.meta: dict[str, Any] = meta if isinstance(meta, dict) else {}
        self.cancelled = threading.Event()
        self._send = send
        self._last_progress: float | None = None

    @property
    def name(self) -> str:
        return str(self.params.get("name", ""))

    def progress(self, value: float, total: float | None = None, message: str = "") -> None:
        """A progress notification, if the client asked for them (values only go up)."""
        token = self.meta.get("progressToken")
        if token is None or self.cancelled.is_set():
            return
        if self._last_progress is not None and value <= self._last_progress:
            return
        self._last_progress = value
        params: dict[str, Any] = {"progressToken": token, "progress": value}
        if total is not None:
            params["total"] = total
        if message:
            params["message"] = message
        self._send({"jsonrpc": "2.0", "method": "notifications/progress", "params": params})

    def pause(self, seconds: float) -> bool:
        """Wait; True when the call was cancelled meanwhile (stop working)."""
        return self.cancelled.wait(seconds) if seconds > 0 else self.cancelled.is_set()


class DemoServer:
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
        self._log = log or _stderr_log
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

    def _tools(self) -> dict[str, Callable[[Call], dict[str, Any] | None]]:
        return {
            "build": self._build,
            "deploy": self._deploy,
            "status": self._status,
            "add_note": self._add_note,
            "search": self._search,
        }

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

    def _build(self, call: Call) -> dict[str, Any] | None:
        target = str(call.arguments.get("target", "app"))
        for step, what in enumerate(BUILD_STEPS, start=1):
            if call.pause(self.delay):
                return None
            call.progress(step, len(BUILD_STEPS), f"{what} ({step}/{len(BUILD_STEPS)})")
        if call.pause(self.delay / 2):
            return None
        artifact = f"{target}-{BUILD_VERSION}.tar.gz"
        self.log(f"built {artifact}")
        return text_result(f"built {artifact}", {"artifact": artifact, "steps": len(BUILD_STEPS)})

    def _deploy(self, call: Call) -> dict[str, Any] | None:
        env = str(call.arguments.get("env", "staging"))
        state = call.params.get("requestState")
        if state is None:
            capabilities = call.meta.get(MCP + "clientCapabilities")
            if not isinstance(capabilities, dict) or "elicitation" not in capabilities:
                # The client cannot be asked: say so instead of sending an input request.
                return complete(
                    {
                        "content": [
                            {"type": "text", "text": "deploy needs a confirmation (elicitation)"}
                        ],
                        "isError": True,
                    }
                )
            return {
                "resultType": "input_required",
                "inputRequests": {"confirm": confirm_request(env)},
                "requestState": self.seal({"tool": "deploy", "env": env}),
                "_meta": RESULT_META,
            }
        payload = self.unseal(state)
        if payload.get("tool") != "deploy" or payload.get("env") != env:
            raise RequestError(INVALID_PARAMS, "requestState does not belong to this request")
        responses = call.params.get("inputResponses")
        answer = responses.get("confirm") if isinstance(responses, dict) else None
        if not isinstance(answer, dict):
            raise RequestError(INVALID_PARAMS, "inputResponses.confirm is missing")
        content = answer.get("content")
        confirmed = answer.get("action") == "accept" and isinstance(content, dict)
        if not confirmed or not content or content.get("confirm") is not True:
            self.log(f"deploy to {env} declined by the user")
            return text_result(f"deploy to {env} cancelled: not confirmed")
        if call.pause(self.delay):
            return None
        with self._lock:
            self.deployed[env] = BUILD_VERSION
        self.log(f"deploy to {env} confirmed by the user; {BUILD_VERSION} is live")
        return text_result(f"deployed {BUILD_VERSION} to {env}")

    def _status(self, call: Call) -> dict[str, Any] | None:
        env = str(call.arguments.get("env", "staging"))
        with self._lock:
            version = self.deployed.get(env, "none")
        healthy = version != "none"
        # DELIBERATE VIOLATION tools.output-schema: the declared outputSchema says
        # `healthy` is a boolean; this sends the string "yes" (or "no").
        structured = {"env": env, "version": version, "healthy": "yes" if healthy else "no"}
        return text_result(
            f"{env}: {version}, {'healthy' if healthy else 'not deployed'}", structured
        )

    def _add_note(self, call: Call) -> dict[str, Any] | None:
        text = str(call.arguments.get("text", "")).strip() or "(empty)"
        with self._lock:
            self.notes.append(text)
            count = len(self.notes)
            listeners = [rid for rid, uris in self._listens.values() if NOTE_URI in uris]
        for listen_id in listeners:  # the subscription event, before the call's own answer
            self.send(
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/resources/updated",
                    "params": {"_meta": {MCP + "subscriptionId": listen_id}, "uri": NOTE_URI},
                }
            )
        return text_result(f"noted ({count} items in {NOTE_URI})")

    def _search(self, call: Call) -> dict[str, Any] | None:
        query = str(call.arguments.get("query", ""))
        call.progress(0, None, f"searching every note for {query!r}")
        if call.pause(SEARCH_SECONDS):
            return None  # cancelled: stop, say nothing more
        return text_result(f"no note mentions {query!r}")

    # -- requestState: opaque to the client, integrity-protected by the server ----------------
    def seal(self, payload: dict[str, Any]) -> str:
        data = {**payload, "exp": round(time.time() + STATE_TTL)}
        body = base64.urlsafe_b64encode(json.dumps(data, sort_keys=True).encode()).decode()
        mac = hmac.new(self._secret, body.encode(), hashlib.sha256).digest()
        return f"{body}.{base64.urlsafe_b64encode(mac).decode()}"

    def unseal(self, state: Any) -> dict[str, Any]:
        if not isinstance(state, str) or state.count(".") != 1:
            raise RequestError(INVALID_PARAMS, "requestState is not one this server issued")
        body, mac = state.split(".")
        expected = base64.urlsafe_b64encode(
            hmac.new(self._secret, body.encode(), hashlib.sha256).digest()
        ).decode()
        if not hmac.compare_digest(mac, expected):
            raise RequestError(INVALID_PARAMS, "requestState failed verification")
        data = json.loads(base64.urlsafe_b64decode(body))
        if not isinstance(data, dict) or float(data.get("exp", 0)) < time.time():
            raise RequestError(INVALID_PARAMS, "requestState expired")
        return data


def confirm_request(env: str) -> dict[str, Any]:
    """The ``elicitation/create`` input request that asks the user to confirm a deploy."""
    return {
        "method": "elicitation/create",
        "params": {
            "mode": "form",
            "message": f"Deploy {BUILD_VERSION} to {env}?",
            "requestedSchema": {
                "type": "object",
                "properties": {
                    "confirm": {
                        "type": "boolean",
                        "title": "Deploy now",
                        "description": f"yes: deploy {BUILD_VERSION} to {env}",
                    }
                },
                "required": ["confirm"],
            },
        },
    }


def _stderr_log(text: str) -> None:
    print(f"demo-server: {text}", file=sys.stderr, flush=True)


def _stdout_send(message: Message) -> None:
    sys.stdout.write(json.dumps(message, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m inspector.demo.server",
        description="mcpeek's demo MCP server (2026-07-28, stdio).",
    )
    parser.add_argument(
        "--delay",
        type=float,
        default=0.3,
        metavar="SECONDS",
        help="pause between a tool's steps (default: 0.3)",
    )
    args = parser.parse_args(argv)
    server = DemoServer(_stdout_send, delay=max(0.0, args.delay))
    _stderr_log("ready")
    try:
        for line in sys.stdin:
            if not line.strip():
                continue
            try:
                message = json.loads(line)
            except ValueError:
                _stderr_log("ignored a line that is not JSON")
                continue
            server.handle(message)
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
    _stderr_log("bye")
    return 0


if __name__ == "__main__":
    sys.exit(main())
