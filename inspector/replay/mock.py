"""A mock MCP server made of a capture's server side, sans-IO.

:class:`MockServer` holds what a capture recorded (a
:class:`~mcpeek.inspector.replay.script.Script`) and the options; each client
connection gets a :class:`MockSession`, which is fed the live client's
messages one by one (:meth:`MockSession.receive`) and answers with a
:class:`Reaction`: the messages to send, each with the delay to wait before
it and the live request whose stream carries it. The session never touches
a socket or a clock, so it is tested with plain calls; ``mock_stdio`` and
``mock_http`` are the thin front ends that do the I/O.

Matching: a live request is answered by the recorded one with the same
method and canonical params (:func:`~mcpeek.inspector.replay.canonical.request_key`:
key order, the JSON-RPC id and volatile ``_meta`` never matter; ``ignore``
pointers drop more). A key recorded N times is answered in recorded order,
then the last answer repeats. The recorded bytes are sent as they were, with
the live ``id`` (and progress token, subscription id) spliced in. The
handshake (``initialize``, ``server/discover``) is answered whatever its
params. An MRTR retry matches by its params without ``inputResponses`` and by
a ``requestState`` this session issued. A miss is answered with a JSON-RPC
error naming the closest recorded request (or, with ``on_miss="forward"``,
handed to the front end to forward to a real server). Playing the matched
call's steps, with the live ids spliced in, is
:mod:`~mcpeek.inspector.replay.mock_play`'s.

Python API (what a pytest plugin builds on)::

    from mcpeek.inspector.replay import MockServer, serve_stdio, start_http
    server = MockServer.from_capture("captures/x.jsonl", timing="fast")
    with start_http(server) as running:      # a background thread
        client_under_test(running.url)       # http://127.0.0.1:PORT/mcp
    # stdio clients spawn a command line instead:
    #   [sys.executable, "-I", "-m", "mcpeek", "serve", "captures/x.jsonl"]
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import Any, Literal

import msgspec

from mcpeek.inspector.capture.reader import CaptureReader
from mcpeek.inspector.capture.redact import Redactor
from mcpeek.inspector.jsonrpc import TOO_DEEP, Message, MessageDecoder
from mcpeek.inspector.records import AnyRecord, Header
from mcpeek.inspector.replay.canonical import Pointer, canonical, parse_pointers, request_key
from mcpeek.inspector.replay.closest import explain_miss
from mcpeek.inspector.replay.mock_play import Outgoing, Playback
from mcpeek.inspector.replay.rawjson import member_bytes, replace_member
from mcpeek.inspector.replay.script import HANDSHAKES, Script, build_script, match_key

Timing = Literal["recorded", "fast"]
OnMiss = Literal["error", "forward"]
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INVALID_REQUEST = -32600
PARSE_ERROR = -32700


class ServeError(ValueError):
    """The capture cannot be served (e.g. it has no server side); ``str()`` says why."""


class Reaction(msgspec.Struct):
    out: list[Outgoing] = msgspec.field(default_factory=list)
    forward: bool = False  # hand the client's message to the real server
    shadow: bool = False  # forwarded only to keep the real server in step: drop its answer
    cancel: bytes | None = None  # a live request id whose unsent replies must be dropped
    note: str | None = None  # for the operator's log (a miss)


class MockServer:
    def __init__(
        self,
        script: Script,
        *,
        ignore: Sequence[Pointer] = (),
        timing: Timing = "recorded",
        on_miss: OnMiss = "error",
        redacted: bool = False,
    ) -> None:
        if script.server_messages == 0:
            raise ServeError("the capture has no server side (no message from the server)")
        self.script = script
        # A redacted capture holds markers where the client sent secrets: live
        # messages are redacted the same way before matching, or none would match.
        self.redactor = Redactor() if redacted else None
        self.ignore = list(ignore)
        self.timing = timing
        self.on_miss = on_miss

    @classmethod
    def from_records(
        cls,
        records: Iterable[AnyRecord],
        *,
        ignore: Iterable[str] = (),
        timing: Timing = "recorded",
        on_miss: OnMiss = "error",
    ) -> MockServer:
        """``ignore`` are JSON Pointers (``/params/arguments/ts``); a bad one raises
        :class:`~mcpeek.inspector.replay.canonical.PointerError`."""
        records = list(records)
        pointers = parse_pointers(ignore)
        header = records[0] if records and isinstance(records[0], Header) else None
        return cls(
            build_script(records, pointers),
            ignore=pointers,
            timing=timing,
            on_miss=on_miss,
            redacted=header is not None and header.redaction is not None,
        )

    @classmethod
    def from_capture(
        cls,
        path: str | os.PathLike[str],
        *,
        ignore: Iterable[str] = (),
        timing: Timing = "recorded",
        on_miss: OnMiss = "error",
    ) -> MockServer:
        """Raises ``CaptureError``, ``PointerError`` or :class:`ServeError` (all ``ValueError``
        or ``Exception`` with a user-facing ``str()``)."""
        records: list[AnyRecord] = list(CaptureReader(path).stream())  # the header first
        return cls.from_records(records, ignore=ignore, timing=timing, on_miss=on_miss)

    @property
    def era(self) -> str | None:
        return self.script.era

    def session(self) -> MockSession:
        return MockSession(self)


class MockSession:
    """One live client's conversation with the mock (see the module docstring)."""

    def __init__(self, server: MockServer) -> None:
        self.server = server
        self.script = server.script
        self.misses: list[str] = []
        self._decoder = MessageDecoder()
        self._served: dict[Any, int] = {}
        self._issued: set[bytes] = set()
        self._playback = Playback(fast=server.timing == "fast")

    def opening(self) -> list[Outgoing]:
        """What the server sent before any client message (rare; sent at connect)."""
        out: list[Outgoing] = []
        self._playback.play(self.script.opening, None, None, out)
        return out

    # -- one client message ------------------------------------------------------
    def receive(self, data: bytes) -> Reaction:
        if self.server.redactor is not None:
            data = self.server.redactor.live_message(data)
        message = self._decoder.decode(data)
        if message.detail == TOO_DEEP:
            return _too_deep(data)
        try:
            return self._receive(data, message)
        except RecursionError:  # params nested past what matching can walk
            return _too_deep(data)

    def _receive(self, data: bytes, message: Message) -> Reaction:
        if message.kind == "invalid":
            code = PARSE_ERROR if message.problem in ("not-json", "not-utf8") else INVALID_REQUEST
            note = f"not a JSON-RPC message ({message.detail})"
            return Reaction([_error(_readable_id(data, code), code, note, None)], note=note)
        if message.kind == "batch":
            note = "JSON-RPC batches are not supported by MCP"
            return Reaction([_error(b"null", INVALID_REQUEST, note, None)], note=note)
        if message.kind == "notification":
            return self._notification(data, message.method)
        if message.kind in ("result", "error"):
            return self._answer(data)
        live_id = member_bytes(data, ("id",)) or b"null"
        return self._request(data, live_id, message.method or "", message.params_value())

    def _notification(self, data: bytes, method: str | None) -> Reaction:
        reaction = Reaction(forward=self.server.on_miss == "forward")
        if method == "notifications/cancelled":
            reaction.cancel = member_bytes(data, ("params", "requestId"))
            return reaction
        params = self._decoder.decode(data).params_value()
        key = request_key(method, params, self.server.ignore)
        reactions = self.script.anchored.get(key)
        if reactions:
            steps = self._next(("anchor", key), reactions)
            self._playback.play(steps, None, None, reaction.out)
        return reaction

    def _answer(self, data: bytes) -> Reaction:
        raw = member_bytes(data, ("id",))
        reaction = Reaction()
        if raw is None or not self._playback.answered(raw, reaction.out):
            return Reaction(forward=self.server.on_miss == "forward")
        return reaction

    def _request(self, data: bytes, live_id: bytes, method: str, params: Any) -> Reaction:
        key, state = match_key(method, params, self.server.ignore)
        candidates = self.script.calls.get((key, state))
        unissued = state is not None and state not in self._issued
        if candidates and not unissued:
            call = self._next((key, state), candidates)
        elif method in HANDSHAKES and method in self.script.by_method:
            call = self._next(("method", method), self.script.by_method[method])
        elif method == "ping" and method not in self.script.by_method:
            return Reaction([_pong(live_id, self.script.era)])
        else:
            return self._miss(live_id, method, params, unissued)
        token = member_bytes(data, ("params", "_meta", "progressToken"))
        reaction = Reaction()
        if method == "initialize" and self.server.on_miss == "forward":
            reaction.forward = reaction.shadow = True
        if call.issued_state is not msgspec.UNSET:
            self._issued.add(canonical(call.issued_state))
        self._playback.play(call.steps, live_id, token, reaction.out)
        if call.after and reaction.out and reaction.out[-1].final:
            self._playback.play(call.after, None, None, reaction.out)
        return reaction

    def _miss(self, live_id: bytes, method: str, params: Any, unissued: bool) -> Reaction:
        recorded = self.script.by_method.get(method, [])
        if not recorded:
            known = ", ".join(self.script.methods()) or "none"
            text = f"no recorded {method} request (the capture has: {known})"
            code, data = METHOD_NOT_FOUND, {"method": method}
        else:
            text, data = explain_miss(method, params, [c.params for c in recorded], self._ignore)
            code = INVALID_PARAMS
            if unissued:
                text += "; its requestState was not issued by this mock"
        self.misses.append(text)
        if self.server.on_miss == "forward":
            return Reaction(forward=True, note=f"forwarded: {text}")
        return Reaction([_error(live_id, code, text, data)], note=text)

    @property
    def _ignore(self) -> list[Pointer]:
        return self.server.ignore

    def _next(self, key: Any, calls: list[Any]) -> Any:
        """FIFO per key; once exhausted, the last one again."""
        n = self._served.get(key, 0)
        self._served[key] = n + 1
        return calls[min(n, len(calls) - 1)]


def _too_deep(data: bytes) -> Reaction:
    """A message too deep to read is answered as unparseable; a request (found by a
    scan, which no depth stops) gets the error with its id, so its client does not wait."""
    note = f"not a JSON-RPC message ({TOO_DEEP})"
    request = member_bytes(data, ("method",)) is not None
    live_id = (member_bytes(data, ("id",)) if request else None) or b"null"
    return Reaction([_error(live_id, PARSE_ERROR, note, None)], note=note)


def _error(live_id: bytes, code: int, message: str, data: Any) -> Outgoing:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    body = msgspec.json.encode({"jsonrpc": "2.0", "id": 0, "error": error})
    body = replace_member(body, ("id",), live_id) or body
    return Outgoing(body, 0.0, None if live_id == b"null" else live_id, final=True)


def _pong(live_id: bytes, era: str | None) -> Outgoing:
    result: dict[str, Any] = {"resultType": "complete"} if era == "modern" else {}
    body = msgspec.json.encode({"jsonrpc": "2.0", "id": 0, "result": result})
    return Outgoing(replace_member(body, ("id",), live_id) or body, 0.0, live_id, final=True)


def _readable_id(data: bytes, code: int) -> bytes:
    """The id to answer an invalid request with: its own, when it could be read (a
    string or a number), else ``null`` (JSON-RPC 2.0: Null only "if there was an
    error in detecting the id")."""
    if code == PARSE_ERROR:
        return b"null"
    raw = member_bytes(data, ("id",))
    if raw and (raw[:1] == b'"' or raw[:1] in b"-0123456789"):
        return raw
    return b"null"
