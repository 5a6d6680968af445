"""JSON-RPC envelope rules: version, shape, ids, pairing, error objects.

Both eras share JSON-RPC 2.0 with MCP's additions (ids never null, no
batches outside 2025-03-26); the modern revision adds an error-code policy.

What correlation already knows is reused, not recomputed: an orphan
response is a flow with status ``orphan`` whose lone entry is the response,
a second answer is in ``attempt.duplicates``. The few rules that keep state
(``id.reused``, ``id.null``, ``jsonrpc.batch``) keep small keys per
conversation and drop them when the conversation ends.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import OrderedDict
from typing import Any, ClassVar

import msgspec

from inspector.analysis import Attempt, Conversation, Entry, Flow
from inspector.analysis.analyzer import ORIGIN
from inspector.analysis.peek import id_key
from inspector.jsonrpc import Message, MessageDecoder
from inspector.records import Msg, Record, wire_bytes
from rules.base import MODERN_SPEC, Finding, Findings, Rule
from rules.context import MessageContext

BASIC = f"{MODERN_SPEC}/basic/index"
RESPONSES = frozenset({"result", "error"})
SIDE = {"c2s": "client", "s2c": "server"}
OTHER_SIDE = {"c2s": "server", "s2c": "client"}
#: Error codes the 2026-07-28 specification defines in its reserved sub-range.
DEFINED_CODES = frozenset({-32020, -32021, -32022})
#: Codes of earlier revisions that a 2026-07-28 implementation MUST NOT emit.
LEGACY_CODES = {-32002: "resource not found", -32042: "URL elicitation required"}


# -- small helpers shared by the rules of this family (and by rules.framing) ----------
def show(value: Any) -> str:
    """A JSON value as it appeared (``1``, ``"1"``, ``1.5``, ``null``…), for messages."""
    if value is msgspec.UNSET:
        return "(absent)"
    try:
        return msgspec.json.encode(value).decode()
    except (TypeError, msgspec.EncodeError):
        return repr(value)


def is_valid_id(value: Any) -> bool:
    """A string or an integer (``true`` is not an integer here)."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def is_notification_method(method: str | None) -> bool:
    return method is not None and method.startswith("notifications/")


def is_batch(record: Msg) -> bool:
    """Whether a message's bytes are a JSON array (cheap: looks at the first character)."""
    raw = record.raw
    if raw is not None:
        head = raw[:1]
        if head == "[":
            return True
        if head not in (" ", "\t", "\r", "\n"):
            return False
        return raw.lstrip(" \t\r\n")[:1] == "["
    return wire_bytes(record).lstrip(b" \t\r\n")[:1] == b"["


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
        if not is_batch(ctx.entry.record):
            return ctx.message
        whole = self._decoder.decode(ctx.wire)
        invalid = [item for item in whole.items if item.kind == "invalid"]
        if self._n < len(invalid):
            return invalid[self._n]
        return ctx.message


# -- the envelope ---------------------------------------------------------------------
class JsonrpcVersion(Rule):
    id = "jsonrpc.version"
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
    severity = "error"
    summary = "a JSON array (batch); allowed only in 2025-03-26 (then info)"
    spec = f"{MODERN_SPEC}/basic/transports/streamable-http#sending-messages"

    record_types = frozenset({Msg})

    def __init__(self) -> None:
        self._last_seq = -1  # the members of a batch share their seq: report it once

    def on_message(self, ctx: MessageContext) -> Findings:
        if ctx.seq == self._last_seq or not is_batch(ctx.entry.record):
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
        except msgspec.DecodeError:
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


# -- ids --------------------------------------------------------------------------------
#: How many unreadable messages (``id.null`` credits) are remembered per side.
CREDIT_LIMIT = 1024


class IdNull(Rule):
    """A null id: never on a request or a result; on an error only for an unreadable request.

    JSON-RPC answers a message whose id could not be read with an error whose
    id is null, and MCP keeps that exception ("except in error cases where
    the ID could not be read due a malformed request"). An observer cannot
    see the receiver's parse, so every message of the other side whose id
    could not be read (not JSON, not an object, no shape, an id of the wrong
    type, a batch) grants one such error; an error with a null id without one
    is reported. State: one small counter per conversation and side.
    """

    id = "id.null"
    severity = "error"
    summary = "`id` is null on a request or on a response whose request id was readable"
    spec = f"{BASIC}#requests"
    kinds = frozenset({"request", "result", "error", "invalid"})

    def __init__(self) -> None:
        self._credits: dict[tuple[str, str], int] = {}
        self._batch_seq = -1

    def _grant(self, ctx: MessageContext) -> None:
        key = (ctx.conversation.key, ctx.entry.dir)
        self._credits[key] = min(self._credits.get(key, 0) + 1, CREDIT_LIMIT)

    def on_message(self, ctx: MessageContext) -> Findings:
        entry = ctx.entry
        if entry.seq != self._batch_seq and is_batch(entry.record):
            self._batch_seq = entry.seq
            self._grant(ctx)  # a batch may be rejected whole, with one null-id error
        if entry.kind == "invalid":
            self._grant(ctx)
            return None
        if entry.kind == "request":
            if not is_valid_id(entry.id):
                self._grant(ctx)
            if entry.id is None:
                return [ctx.finding("request has a null id (MCP ids MUST NOT be null)")]
            return None
        if entry.id is not None:
            return None
        if entry.kind == "result":
            return [ctx.finding("result has a null id (MCP ids MUST NOT be null)")]
        other = "c2s" if entry.dir == "s2c" else "s2c"
        key = (ctx.conversation.key, other)
        credits = self._credits.get(key, 0)
        if credits:
            self._credits[key] = credits - 1
            return None
        return [
            ctx.finding(
                f"error has a null id, but no message from the {OTHER_SIDE[entry.dir]} "
                "had an unreadable id"
            )
        ]

    def on_conversation_end(self, conversation: Conversation) -> Findings:
        for side in ("c2s", "s2c"):
            self._credits.pop((conversation.key, side), None)
        return None


class IdType(Rule):
    id = "id.type"
    severity = "error"
    summary = "`id` is neither a string nor an integer (float, bool, object…)"
    spec = f"{BASIC}#requests"
    kinds = frozenset({"request"})

    def on_message(self, ctx: MessageContext) -> Findings:
        value = ctx.entry.id
        if value is None or is_valid_id(value):  # null is id.null's
            return None
        kind = {
            bool: "a boolean",
            float: "a number with a fraction or exponent",
            dict: "an object",
            list: "an array",
        }.get(type(value), type(value).__name__)
        return [ctx.finding(f"request id {show(value)} is {kind}, must be a string or an integer")]


#: Per conversation and sender, at most this many requests are tracked as in
#: flight by ``id.reused`` (the oldest are forgotten first).
IN_FLIGHT_LIMIT = 4096
#: Per conversation and sender, at most this many id *ranges* (consecutive
#: integers) and this many other ids (strings…) are remembered for the legacy
#: "previously used" check; beyond that the oldest are forgotten.
USED_RANGES_LIMIT = 65536
USED_OTHERS_LIMIT = 65536


class UsedIds:
    """The ids one sender used in a session, compactly.

    Integers are kept as sorted disjoint ranges, so a sender counting
    1, 2, 3… costs one range whatever the length of the session; other ids
    (strings, as most UUID-minting SDKs send) cost one set entry each, about
    100 bytes, up to :data:`USED_OTHERS_LIMIT` (so a few MB at worst).
    """

    __slots__ = ("_ends", "_others", "_starts")

    def __init__(self) -> None:
        self._starts: list[int] = []
        self._ends: list[int] = []
        self._others: dict[Any, None] = {}  # insertion-ordered set

    def __contains__(self, key: Any) -> bool:
        if isinstance(key, int):
            i = bisect_right(self._starts, key) - 1
            return i >= 0 and key <= self._ends[i]
        return key in self._others

    def __len__(self) -> int:
        return len(self._starts) + len(self._others)

    def add(self, key: Any) -> None:
        if not isinstance(key, int):
            self._others[key] = None
            if len(self._others) > USED_OTHERS_LIMIT:
                del self._others[next(iter(self._others))]
            return
        starts, ends = self._starts, self._ends
        if ends and key == ends[-1] + 1:  # the common case: the next integer
            ends[-1] = key
            return
        i = bisect_right(starts, key) - 1
        if i >= 0 and key <= ends[i]:
            return
        left = i >= 0 and ends[i] == key - 1
        right = i + 1 < len(starts) and starts[i + 1] == key + 1
        if left and right:
            ends[i] = ends[i + 1]
            del starts[i + 1], ends[i + 1]
        elif left:
            ends[i] = key
        elif right:
            starts[i + 1] = key
        else:
            starts.insert(i + 1, key)
            ends.insert(i + 1, key)
            if len(starts) > USED_RANGES_LIMIT:
                del starts[0], ends[0]


class _SenderIds:
    __slots__ = ("in_flight", "used")

    def __init__(self) -> None:
        # id key → the request's flow and attempt, while it may be unanswered
        self.in_flight: OrderedDict[Any, tuple[Flow, Attempt]] = OrderedDict()
        self.used = UsedIds()


class IdReused(Rule):
    """A request id the same sender still has in flight (both eras), or, in the legacy
    era, one it already used in the session.

    Cost: the requests each sender has in flight (answered ones are dropped
    when their response arrives, cancelled ones when their flow ends; ones
    never answered stay, up to :data:`IN_FLIGHT_LIMIT`), plus the compact
    :class:`UsedIds` of every id sent since the last ``initialize``. Modern
    HTTP traffic without a session mixes every client of an origin in one
    conversation, so two clients may rightly use the same id there: it is
    not checked.
    """

    id = "id.reused"
    severity = "error"
    summary = "a request id the same sender still has unanswered (legacy: any id used before)"
    spec = f"{BASIC}#requests"
    kinds = frozenset({"request", "result", "error"})

    def __init__(self) -> None:
        self._state: dict[tuple[str, str], _SenderIds] = {}

    def _sender(self, conversation: Conversation, direction: str) -> _SenderIds:
        key = (conversation.key, direction)
        state = self._state.get(key)
        if state is None:
            state = self._state[key] = _SenderIds()
        return state

    def on_message(self, ctx: MessageContext) -> Findings:
        entry = ctx.entry
        if ctx.conversation.key == ORIGIN:
            return None
        if entry.kind != "request":
            self._answered(ctx)
            return None
        key = id_key(entry.id)
        sender = self._sender(ctx.conversation, entry.dir)
        if entry.dir == "c2s" and entry.method == "initialize":
            # A new legacy session begins: what went before (a server/discover
            # probe of a dual-era client) is not "within the same session".
            for direction in ("c2s", "s2c"):
                self._sender(ctx.conversation, direction).used = UsedIds()
        findings: list[Finding] = []
        earlier = sender.in_flight.get(key)
        attempt = ctx.attempt
        who = SIDE.get(entry.dir, entry.dir)
        if earlier is not None and earlier[1] is not attempt and _still_in_flight(*earlier):
            flow, first = earlier
            if not (entry.method == "initialize" and flow.method == "server/discover"):
                findings.append(
                    ctx.finding(
                        f"request id {show(entry.id)} is still in flight from the {who} "
                        f"({flow.method} at seq {first.request.seq})",
                        also=[first.request.seq],
                    )
                )
        elif ctx.era == "legacy" and key in sender.used:
            findings.append(
                ctx.finding(
                    f"request id {show(entry.id)} was already used by the {who} in this session"
                )
            )
        if attempt is not None:
            sender.in_flight[key] = (ctx.flow, attempt)
            sender.in_flight.move_to_end(key)
            if len(sender.in_flight) > IN_FLIGHT_LIMIT:
                sender.in_flight.popitem(last=False)
        sender.used.add(key)
        return findings

    def _answered(self, ctx: MessageContext) -> None:
        request = ctx.request
        if request is None:
            return
        state = self._state.get((ctx.conversation.key, request.dir))
        if state is None:
            return
        key = id_key(request.id)
        earlier = state.in_flight.get(key)
        if earlier is not None and earlier[1].request is request:
            del state.in_flight[key]

    def on_flow_end(self, flow: Flow, conversation: Conversation) -> Findings:
        if flow.status != "cancelled":
            return None
        state = self._state.get((conversation.key, flow.sender))
        if state is None:
            return None
        for attempt in flow.attempts:
            key = id_key(attempt.request.id)
            earlier = state.in_flight.get(key)
            if earlier is not None and earlier[1] is attempt:
                del state.in_flight[key]
        return None

    def on_conversation_end(self, conversation: Conversation) -> Findings:
        for direction in ("c2s", "s2c"):
            self._state.pop((conversation.key, direction), None)
        return None


def _still_in_flight(flow: Flow, attempt: Attempt) -> bool:
    """Not answered and not cancelled (a timed-out request is still unanswered)."""
    return attempt.response is None and flow.cancel is None


# -- pairing ----------------------------------------------------------------------------
def _id_phrase(entry: Entry) -> str:
    return f"id {show(entry.id)}"


class ResponseUnknownId(Rule):
    id = "response.unknown-id"
    severity = "error"
    summary = "a response whose id matches no request from the other side"
    spec = f"{BASIC}#result-responses"
    kinds = RESPONSES

    def on_message(self, ctx: MessageContext) -> Findings:
        entry = ctx.entry
        if ctx.flow.status != "orphan" or ctx.flow.orphan is not entry:
            return None
        if entry.id is None:
            return None  # id.null's (an error for an unreadable request is allowed)
        if entry.id is msgspec.UNSET:
            if entry.kind == "error":
                return None  # "id?": an error may omit it (e.g. rejecting a notification POST)
            return [ctx.finding("result has no id, so it answers no request")]
        if ctx.era == "modern" and entry.ch == "stdio" and entry.dir == "c2s":
            return None  # stdio.client-response says it: a modern server sends no request
        other = OTHER_SIDE.get(entry.dir, "other side")
        return [
            ctx.finding(f"{entry.kind} for {_id_phrase(entry)} matches no request from the {other}")
        ]


class ResponseDuplicate(Rule):
    id = "response.duplicate"
    severity = "error"
    summary = "a second response to the same request"
    spec = f"{BASIC}#responses"
    kinds = RESPONSES

    def on_message(self, ctx: MessageContext) -> Findings:
        attempt = ctx.attempt
        if attempt is None or not any(d is ctx.entry for d in attempt.duplicates):
            return None
        first = attempt.response
        also = [attempt.request.seq] + ([first.seq] if first is not None else [])
        return [
            ctx.finding(
                f"second response to {ctx.flow.method} ({_id_phrase(attempt.request)}), "
                f"already answered at seq {first.seq if first is not None else '?'}",
                also=also,
            )
        ]


class ResponseToNotification(Rule):
    id = "response.to-notification"
    severity = "error"
    summary = "a response to a message that was a notification"
    spec = f"{BASIC}#notifications"
    kinds = RESPONSES

    def on_message(self, ctx: MessageContext) -> Findings:
        request = ctx.request
        if request is None or not is_notification_method(request.method):
            return None
        return [
            ctx.finding(
                f"{ctx.entry.kind} answers {request.method} ({_id_phrase(request)}), "
                "a notification (the receiver MUST NOT respond)",
                also=[request.seq],
            )
        ]


class NotificationWithId(Rule):
    id = "notification.with-id"
    severity = "error"
    summary = "a `notifications/*` method sent with an `id`"
    spec = f"{BASIC}#notifications"
    kinds = frozenset({"request"})

    def on_message(self, ctx: MessageContext) -> Findings:
        if not is_notification_method(ctx.entry.method):
            return None
        return [
            ctx.finding(
                f"{ctx.entry.method} carries {_id_phrase(ctx.entry)} "
                "(notifications MUST NOT include an id)"
            )
        ]


# -- error objects ----------------------------------------------------------------------
def _error_object(ctx: MessageContext) -> dict[str, Any] | None:
    error = ctx.error
    return error if isinstance(error, dict) else None


def _code(ctx: MessageContext) -> int | None:
    """The error's integer code, or ``None`` when it has none (error.code-type's)."""
    error = _error_object(ctx)
    code = error.get("code") if error is not None else None
    return code if isinstance(code, int) and not isinstance(code, bool) else None


def _probe_rejection(ctx: MessageContext, code: int) -> bool:
    """A ``server/discover`` probe rejected with a non-modern code: a legacy server
    answering in its own terms (the era is only settled by what follows)."""
    return ctx.method == "server/discover" and code not in DEFINED_CODES


def _about(ctx: MessageContext) -> str:
    method = ctx.method
    return f" for {method} ({_id_phrase(ctx.entry)})" if method else f" ({_id_phrase(ctx.entry)})"


class ErrorCodeType(Rule):
    id = "error.code-type"
    severity = "error"
    summary = "`error.code` is not an integer"
    spec = f"{BASIC}#error-responses"
    kinds = frozenset({"error"})

    def on_message(self, ctx: MessageContext) -> Findings:
        error = ctx.error
        if not isinstance(error, dict):
            return [ctx.finding(f"error member is {show(error)}, not an object with a code")]
        if "code" not in error:
            return [ctx.finding(f"error{_about(ctx)} has no code")]
        if _code(ctx) is None:
            return [ctx.finding(f"error code {show(error['code'])}{_about(ctx)} is not an integer")]
        return None


class ErrorMessage(Rule):
    id = "error.message"
    severity = "error"
    summary = "`error.message` missing or not a string"
    spec = f"{BASIC}#error-responses"
    kinds = frozenset({"error"})

    def on_message(self, ctx: MessageContext) -> Findings:
        error = _error_object(ctx)
        if error is None:
            return None  # error.code-type reports a non-object error
        if "message" not in error:
            return [ctx.finding(f"error{_about(ctx)} has no message")]
        if not isinstance(error["message"], str):
            return [
                ctx.finding(f"error message {show(error['message'])}{_about(ctx)} is not a string")
            ]
        return None


class ErrorReservedCode(Rule):
    id = "error.reserved-code"
    severity = "error"
    era = "modern"
    summary = "a code in -32020..-32099 that the spec does not define (-32020, -32021, -32022)"
    spec = f"{BASIC}#error-codes"
    kinds = frozenset({"error"})

    def on_message(self, ctx: MessageContext) -> Findings:
        code = _code(ctx)
        if code is None or not -32099 <= code <= -32020 or code in DEFINED_CODES:
            return None
        if code in LEGACY_CODES or _probe_rejection(ctx, code):
            return None  # -32042 is error.legacy-code's
        return [
            ctx.finding(
                f"error code {code}{_about(ctx)} is in the range reserved for the MCP "
                "specification but not defined by it"
            )
        ]


class ErrorLegacyCode(Rule):
    id = "error.legacy-code"
    severity = "error"
    era = "modern"
    summary = "-32002 (resource not found) or -32042 (URL elicitation required) in the modern era"
    spec = f"{BASIC}#error-codes"
    kinds = frozenset({"error"})

    def on_message(self, ctx: MessageContext) -> Findings:
        code = _code(ctx)
        if code not in LEGACY_CODES or _probe_rejection(ctx, code):
            return None
        replaced = " (use -32602)" if code == -32002 else ""
        return [
            ctx.finding(
                f"error code {code} ({LEGACY_CODES[code]}){_about(ctx)} was removed in "
                f"2026-07-28{replaced}"
            )
        ]


class ErrorLegacyRange(Rule):
    id = "error.legacy-range"
    severity = "warning"
    era = "modern"
    summary = "a code in -32000..-32019 (new implementations SHOULD NOT use it)"
    spec = f"{BASIC}#error-codes"
    kinds = frozenset({"error"})

    def on_message(self, ctx: MessageContext) -> Findings:
        code = _code(ctx)
        if code is None or not -32019 <= code <= -32000:
            return None
        if code in LEGACY_CODES or _probe_rejection(ctx, code):
            return None  # -32002 is error.legacy-code's
        return [
            ctx.finding(f"error code {code}{_about(ctx)} is in the legacy range -32000..-32019")
        ]


# -- unanswered ---------------------------------------------------------------------------
class RequestUnanswered(Rule):
    id = "request.unanswered"
    severity = "warning"
    summary = "a request with no response by the end of the connection, or after the timeout"
    spec = f"{MODERN_SPEC}/basic/patterns/cancellation#timeouts"

    def on_flow_end(self, flow: Flow, conversation: Conversation) -> Findings:
        # Cancelled flows end "cancelled" and open subscriptions/listen streams
        # "closed": only "unanswered" is a request left without an answer.
        if flow.status != "unanswered" or not flow.attempts:
            return None
        if is_notification_method(flow.method):
            return None  # notification.with-id's: it must not be answered at all
        if flow.method == "server/discover" and conversation.era == "legacy":
            return None  # a dual-era probe a legacy server may leave unanswered (stdio page)
        attempt = next((a for a in reversed(flow.attempts) if a.response is None), None)
        if attempt is None:
            return None
        request = attempt.request
        when = "within the timeout" if flow.timed_out else "before the connection ended"
        who = "server" if request.dir == "c2s" else "client"
        return [
            Finding(
                msgs=[request.seq],
                message=f"{flow.method} ({_id_phrase(request)}) got no response from the {who} "
                f"{when}",
            )
        ]
