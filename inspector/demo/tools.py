"""The demo server's tools: one ``tools/call`` at work, and the five handlers.

A :class:`Call` is one ``tools/call`` being worked on in its own thread: it
sends progress (only ever up) and pauses in a way a cancellation interrupts.
:class:`DemoTools` holds the handlers of ``build``, ``deploy``, ``status``,
``add_note`` and ``search``; :class:`~mcpeek.inspector.demo.dispatch.DemoServer`
mixes it in, so they work on the server's state under its lock. ``deploy`` is
the multi round-trip: its ``requestState`` is sealed with an HMAC (opaque to
the client, checked on the retry) and expires after :data:`STATE_TTL` seconds.
``status`` is where the deliberate ``tools.output-schema`` violation lives.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import threading
import time
from collections.abc import Callable
from typing import Any

from mcpeek.inspector.demo.catalog import (
    BUILD_STEPS,
    BUILD_VERSION,
    INVALID_PARAMS,
    MCP,
    NOTE_URI,
    RESULT_META,
    SEARCH_SECONDS,
    STATE_TTL,
    RequestError,
    Send,
    complete,
    text_result,
)


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


class DemoTools:
    """The tool handlers and the ``requestState`` seal, mixed into ``DemoServer``.

    A handler returns the call's result, or ``None`` when the call was cancelled
    meanwhile; a :class:`RequestError` it raises becomes the call's error answer.
    """

    # The server's state and plumbing, which the handlers use (DemoServer sets them).
    delay: float
    notes: list[str]
    deployed: dict[str, str]
    _lock: threading.Lock
    _secret: bytes
    _listens: dict[str, tuple[Any, list[str]]]
    send: Send
    log: Callable[[str], None]

    def _tools(self) -> dict[str, Callable[[Call], dict[str, Any] | None]]:
        return {
            "build": self._build,
            "deploy": self._deploy,
            "status": self._status,
            "add_note": self._add_note,
            "search": self._search,
        }

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
