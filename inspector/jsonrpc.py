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

from typing import Any, Literal

import msgspec

MessageKind = Literal["request", "notification", "result", "error", "batch", "invalid"]

#: ``id`` was absent (distinct from ``"id": null``).
NO_ID: Any = msgspec.UNSET


class _Envelope(msgspec.Struct):
    jsonrpc: Any = msgspec.UNSET
    id: Any = msgspec.UNSET
    method: Any = msgspec.UNSET
    params: msgspec.Raw = msgspec.Raw(b"")
    result: msgspec.Raw = msgspec.Raw(b"")
    error: msgspec.Raw = msgspec.Raw(b"")


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
    try:
        return msgspec.json.decode(raw)
    except msgspec.DecodeError:
        return None


def _raw_or_none(raw: msgspec.Raw) -> msgspec.Raw | None:
    return raw if len(raw) else None


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
        if start == -1:
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
        except msgspec.DecodeError as exc:
            return self._not_json(data, exc)
        return _classify(env)

    def _decode_batch(self, data: bytes) -> Message:
        try:
            members = self._batch.decode(data)
        except msgspec.DecodeError as exc:
            return self._not_json(data, exc)
        items = tuple(self._decode_member(bytes(m)) for m in members)
        return Message("batch", items=items)

    def _decode_member(self, data: bytes) -> Message:
        start = _first_non_space(data)
        if start != -1 and data[start] == 0x7B:
            return self._decode_object(data)
        return Message("invalid", problem="not-object", detail="batch member is not an object")

    def _decode_scalar(self, data: bytes) -> Message:
        try:
            value = self._any.decode(data)
        except msgspec.DecodeError as exc:
            return self._not_json(data, exc)
        return Message(
            "invalid", problem="not-object", detail=f"top-level JSON {type(value).__name__}"
        )

    def _not_json(self, data: bytes, exc: Exception) -> Message:
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as uexc:
            return Message("invalid", problem="not-utf8", detail=str(uexc))
        return Message("invalid", problem="not-json", detail=str(exc))


def _first_non_space(data: bytes) -> int:
    for i, byte in enumerate(data):
        if byte not in b" \t\r\n":
            return i
    return -1


def _classify(env: _Envelope) -> Message:
    params = _raw_or_none(env.params)
    result = _raw_or_none(env.result)
    error = _raw_or_none(env.error)
    common: dict[str, Any] = {"id": env.id, "jsonrpc": env.jsonrpc}
    if env.method is not msgspec.UNSET:
        if not isinstance(env.method, str):
            return Message("invalid", problem="shape", detail="method is not a string", **common)
        if result is not None or error is not None:
            return Message(
                "invalid",
                method=env.method,
                problem="shape",
                detail="a message with both method and result/error",
                **common,
            )
        kind: MessageKind = "notification" if env.id is msgspec.UNSET else "request"
        return Message(kind, method=env.method, params=params, **common)
    if result is not None and error is not None:
        return Message("invalid", problem="shape", detail="both result and error", **common)
    if result is not None:
        return Message("result", result=result, **common)
    if error is not None:
        return Message("error", error=error, **common)
    return Message("invalid", problem="shape", detail="neither method nor result/error", **common)
