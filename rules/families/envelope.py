"""JSON-RPC envelope rules: version, batches, messages of no known shape.

Both eras share JSON-RPC 2.0 with MCP's additions (ids never null, no
batches outside 2025-03-26). The ids, the pairing of responses and the error
objects are the modules ``ids``, ``responses`` and ``errors`` of this package;
the helpers they share with this family are here.
"""

from __future__ import annotations

from typing import Any, ClassVar

import msgspec

from mcpeek.inspector.analysis import Conversation, Entry
from mcpeek.inspector.jsonrpc import Message, MessageDecoder
from mcpeek.inspector.records import Msg, Record, wire_bytes
from mcpeek.rules.base import MODERN_SPEC, Finding, Findings, Rule
from mcpeek.rules.context import MessageContext, is_batch

BASIC = f"{MODERN_SPEC}/basic/index"
RESPONSES = frozenset({"result", "error"})
SIDE = {"c2s": "client", "s2c": "server"}
OTHER_SIDE = {"c2s": "server", "s2c": "client"}


# -- small helpers shared by the envelope families (ids, responses, errors, framing) -----
def show(value: Any) -> str:
    """A JSON value as it appeared (``1``, ``"1"``, ``1.5``, ``null``…), for messages."""
    if value is msgspec.UNSET:
        return "(absent)"
    try:
        return msgspec.json.encode(value).decode()
    except (TypeError, msgspec.EncodeError):
        return repr(value)
    except RecursionError:
        return "(nested too deeply to show)"


def is_valid_id(value: Any) -> bool:
    """A string or an integer (``true`` is not an integer here)."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def is_notification_method(method: str | None) -> bool:
    return method is not None and method.startswith("notifications/")


def id_phrase(entry: Entry) -> str:
    return f"id {show(entry.id)}"


class _InvalidMember:
    """Which invalid message an ``invalid`` entry is.

    The members of a batch are entries with the same ``seq``; ``ctx.message``
    finds a member by kind, id and method, which cannot tell two invalid
    members apart. Entries come in member order, so counting them does.
    """

    def __init__(self) -> None:
        self._seq = -1
        self._n = 0
        self._decoder = MessageDecoder()

    def of(self, ctx: MessageContext) -> Message:
        if ctx.seq == self._seq:
            self._n += 1
        else:
            self._seq, self._n = ctx.seq, 0
        if not ctx.batch:
            return ctx.message
        whole = self._decoder.decode(ctx.wire)
        invalid = [item for item in whole.items if item.kind == "invalid"]
        if self._n < len(invalid):
            return invalid[self._n]
        return ctx.message


# -- the envelope ---------------------------------------------------------------------
class JsonrpcVersion(Rule):
    id = "jsonrpc.version"
    gated = frozenset({"request", "notification", "result", "error"})
    envelope_gated = gated
    severity = "error"
    summary = '`jsonrpc` missing or not exactly "2.0"'
    spec = f"{BASIC}#messages"
    kinds = frozenset({"request", "notification", "result", "error"})

    def on_message(self, ctx: MessageContext) -> Findings:
        version = ctx.message.jsonrpc
        if isinstance(version, str) and version == "2.0":
            return None
        shown = "missing" if version is msgspec.UNSET else show(version)
        return [ctx.finding(f'jsonrpc is {shown}, must be "2.0"')]


class JsonrpcBatch(Rule):
    id = "jsonrpc.batch"
    gated = frozenset({"request", "notification", "result", "error"})  # the gate turns batches away
    envelope_gated = gated  # (so does the envelope check)
    severity = "error"
    summary = "a JSON array (batch); allowed only in 2025-03-26 (then info)"
    spec = f"{MODERN_SPEC}/basic/transports/streamable-http#sending-messages"

    record_types = frozenset({Msg})
    batch_records = True

    def __init__(self) -> None:
        self._last_seq = -1  # the members of a batch share their seq: report it once

    def on_message(self, ctx: MessageContext) -> Findings:
        if ctx.seq == self._last_seq or not ctx.batch:
            return None
        self._last_seq = ctx.seq
        members = ctx.obj
        count = len(members) if isinstance(members, list) else 0
        if ctx.version == "2025-03-26":
            return [
                ctx.finding(
                    f"a JSON-RPC batch of {count} messages (allowed in 2025-03-26 only)",
                    severity="info",
                )
            ]
        where = f"not allowed in {ctx.version}; " if ctx.version else ""
        return [
            ctx.finding(
                f"a JSON-RPC batch of {count} messages ({where}only 2025-03-26 allowed batches)"
            )
        ]

    def on_record(self, record: Record, conversation: Conversation | None) -> Findings:
        # An empty batch has no member, so no entry reaches on_message.
        if not isinstance(record, Msg) or not is_batch(record):
            return None
        try:
            value = msgspec.json.decode(wire_bytes(record))
        except (msgspec.DecodeError, RecursionError):
            return None
        if value != []:
            return None
        return [Finding(msgs=[record.seq], message="an empty JSON-RPC batch ([])")]


class _InvalidProblem(Rule):
    """Reports the ``invalid`` messages whose decoder ``problem`` is the rule's own."""

    problem: ClassVar[str] = ""
    kinds = frozenset({"invalid"})

    def __init__(self) -> None:
        self._member = _InvalidMember()

    def on_message(self, ctx: MessageContext) -> Findings:
        message = self._member.of(ctx)
        if message.problem != self.problem:
            return None
        return [ctx.finding(self.describe(message))]

    def describe(self, message: Message) -> str:
        raise NotImplementedError


class JsonrpcNotObject(_InvalidProblem):
    id = "jsonrpc.not-object"
    severity = "error"
    summary = "top-level JSON value that is not an object (nor a batch)"
    spec = f"{BASIC}#messages"
    problem = "not-object"

    def describe(self, message: Message) -> str:
        return f"not a JSON-RPC message: {message.detail or 'not an object'}"


class JsonrpcShape(_InvalidProblem):
    id = "jsonrpc.shape"
    severity = "error"
    summary = "cannot be classified as request, notification, result or error"
    spec = f"{BASIC}#messages"
    problem = "shape"

    def describe(self, message: Message) -> str:
        where = f" (id {show(message.id)})" if message.has_id else ""
        detail = message.detail or "unknown shape"
        return f"not a request, notification or response{where}: {detail}"
