"""Classify the bytes of one wire message as a JSON-RPC message, never raising.

Decoding is two-level, the msgspec way: the envelope (``jsonrpc``, ``id``,
``method``) is decoded eagerly into a small Struct, while ``params``,
``result`` and ``error`` stay ``msgspec.Raw`` slices of the original bytes and
are decoded only when somebody asks (:meth:`Message.params_value` …). The
decoders are built once per :class:`MessageDecoder`.

Every input yields a :class:`Message`. What is not a well-formed JSON-RPC
message gets ``kind == "invalid"`` and a ``problem`` code saying why
(``not-utf8``, ``not-json``, ``not-object``, ``shape``), so the rules can flag
it and the views can still show it.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

import msgspec

MessageKind = Literal["request", "notification", "result", "error", "batch", "invalid"]

#: ``id`` was absent (distinct from ``"id": null``).
NO_ID: Any = msgspec.UNSET
#: The ``detail`` of a ``not-json`` message nested past what a decode can build.
TOO_DEEP = "JSON nested too deeply to read"


class _Envelope(msgspec.Struct):
    jsonrpc: Any = msgspec.UNSET
    id: Any = msgspec.UNSET
    method: Any = msgspec.UNSET
    params: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET
    result: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET
    error: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET


class Message(msgspec.Struct, gc=False):
    """A decoded JSON-RPC message. Payloads stay raw until asked for.

    ``id`` is :data:`NO_ID` when the member is absent, else whatever JSON value
    was there (``1`` and ``"1"`` stay different; a float or bool id is kept as
    is, for the rules to flag). ``items`` holds a batch's members.
    """

    kind: MessageKind
    id: Any = NO_ID
    method: str | None = None
    jsonrpc: Any = msgspec.UNSET
    params: msgspec.Raw | None = None
    result: msgspec.Raw | None = None
    error: msgspec.Raw | None = None
    problem: str | None = None
    detail: str | None = None
    items: tuple[Message, ...] = ()

    @property
    def has_id(self) -> bool:
        return self.id is not NO_ID

    @property
    def is_response(self) -> bool:
        return self.kind in ("result", "error")

    def params_value(self) -> Any:
        return _lazy(self.params)

    def result_value(self) -> Any:
        return _lazy(self.result)

    def error_value(self) -> Any:
        return _lazy(self.error)


def _lazy(raw: msgspec.Raw | None) -> Any:
    """Decode a raw member on demand; ``None`` when absent (it was valid JSON)."""
    if raw is None:
        return None
    return json_value(raw)


def json_value(data: bytes | bytearray | memoryview | str | msgspec.Raw) -> Any:
    """The JSON value of ``data``, ``None`` if it is not JSON (or nested too deep to
    build); never raises.

    A number beyond a float's range (``1e999``) or an integer of more digits
    than Python converts (4,300) is still JSON, which msgspec declines to
    build: the standard library's decoder reads it as infinity, so that one odd
    number does not make a whole message look undecodable.
    """
    try:
        return msgspec.json.decode(data)
    except msgspec.ValidationError:  # (a DecodeError too: this one first)
        try:
            text = bytes(data) if not isinstance(data, str) else data
            return json.loads(text, parse_int=_int_or_infinity)
        except (ValueError, RecursionError):
            return None
    except (msgspec.DecodeError, RecursionError):  # nested past the interpreter's depth
        return None


def deeper_than(value: Any, limit: int) -> bool:
    """Whether a decoded JSON value nests more than ``limit`` arrays and objects deep
    (walked without recursion: what a recursive walk of it would not survive)."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            item = item.values()
        elif not isinstance(item, list):
            continue
        if depth >= limit:
            return True
        stack.extend((child, depth + 1) for child in item)
    return False


def _int_or_infinity(digits: str) -> int | float:
    try:
        return int(digits)
    except ValueError:  # more digits than int() takes: as big as a float gets
        return float(digits)


class MessageDecoder:
    """Turns wire bytes into :class:`Message` objects; build one and reuse it."""

    def __init__(self) -> None:
        self._envelope = msgspec.json.Decoder(_Envelope)
        self._batch = msgspec.json.Decoder(list[msgspec.Raw])
        self._any = msgspec.json.Decoder()

    def decode(self, data: bytes | bytearray | memoryview | str) -> Message:
        if isinstance(data, str):
            data = data.encode("utf-8", "surrogatepass")
        data = bytes(data)
        start = _first_non_space(data)
        if start == len(data):
            return Message("invalid", problem="not-json", detail="empty message")
        first = data[start]
        if first == 0x7B:  # '{'
            return self._decode_object(data)
        if first == 0x5B:  # '['
            return self._decode_batch(data)
        return self._decode_scalar(data)

    def _decode_object(self, data: bytes) -> Message:
        try:
            env = self._envelope.decode(data)
        except (msgspec.DecodeError, RecursionError) as exc:
            return self._not_json(data, exc)
        return _classify(env)

    def _decode_batch(self, data: bytes) -> Message:
        try:
            members = self._batch.decode(data)
        except (msgspec.DecodeError, RecursionError) as exc:
            return self._not_json(data, exc)
        items = tuple(self._decode_member(bytes(m)) for m in members)
        return Message("batch", items=items)

    def _decode_member(self, data: bytes) -> Message:
        start = _first_non_space(data)
        if start < len(data) and data[start] == 0x7B:
            return self._decode_object(data)
        return Message("invalid", problem="not-object", detail="batch member is not an object")

    def _decode_scalar(self, data: bytes) -> Message:
        try:
            value = self._any.decode(data)
        except (msgspec.DecodeError, RecursionError) as exc:
            return self._not_json(data, exc)
        return Message(
            "invalid", problem="not-object", detail=f"top-level JSON {type(value).__name__}"
        )

    def _not_json(self, data: bytes, exc: Exception) -> Message:
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as uexc:
            return Message("invalid", problem="not-utf8", detail=str(uexc))
        if isinstance(exc, RecursionError):  # deeper than a decode can go: unreadable
            return Message("invalid", problem="not-json", detail=TOO_DEEP)
        return Message("invalid", problem="not-json", detail=str(exc))


_LEADING_SPACE = re.compile(rb"[ \t\r\n]*")


def _first_non_space(data: bytes) -> int:
    """Index of the first byte that is not JSON white space (``len(data)`` if none)."""
    match = _LEADING_SPACE.match(data)
    return match.end() if match else 0


def classify(env: Any) -> tuple[MessageKind, str | None]:
    """The kind of a decoded envelope, and what is wrong with it when ``invalid``.

    ``env`` is any object with the six JSON-RPC members as attributes, absent
    ones being ``UNSET`` (the analyser decodes its own envelope type).
    """
    unset = msgspec.UNSET
    has_result = env.result is not unset
    has_error = env.error is not unset
    if env.method is not unset:
        if not isinstance(env.method, str):
            return "invalid", "method is not a string"
        if has_result or has_error:
            return "invalid", "a message with both method and result/error"
        return ("notification" if env.id is unset else "request"), None
    if has_result and has_error:
        return "invalid", "both result and error"
    if has_result:
        return "result", None
    if has_error:
        return "error", None
    return "invalid", "neither method nor result/error"


def _raw(value: msgspec.Raw | msgspec.UnsetType) -> msgspec.Raw | None:
    return None if isinstance(value, msgspec.UnsetType) else value


def _classify(env: _Envelope) -> Message:
    kind, detail = classify(env)
    method = env.method if isinstance(env.method, str) else None
    if kind == "invalid":
        return Message(
            "invalid", id=env.id, method=method, jsonrpc=env.jsonrpc, problem="shape", detail=detail
        )
    return Message(
        kind,
        id=env.id,
        method=method,
        jsonrpc=env.jsonrpc,
        params=_raw(env.params) if kind in ("request", "notification") else None,
        result=_raw(env.result),
        error=_raw(env.error),
    )
