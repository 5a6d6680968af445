"""JSON-RPC ids: never null (but for an unreadable request), a string or an integer, not reused.

The rules that keep state keep small keys per conversation and drop them
when the conversation ends.
"""

from __future__ import annotations

from typing import Any

from mcpeek.inspector.analysis import Conversation
from mcpeek.inspector.analysis.analyzer import ORIGIN
from mcpeek.inspector.analysis.peek import UNSET, id_key
from mcpeek.inspector.records import Http, Record
from mcpeek.rules.base import Finding, Findings, Rule
from mcpeek.rules.context import MessageContext
from mcpeek.rules.families._bounded import MAX_KEYS, Lru, UsedIds
from mcpeek.rules.families.envelope import BASIC, OTHER_SIDE, SIDE, is_valid_id, show

# -- ids --------------------------------------------------------------------------------
#: How many unreadable messages (``id.null`` credits) are remembered per side.
CREDIT_LIMIT = 1024


class IdNull(Rule):
    """A null id: never on a request or a result; on an error only for an unreadable request.

    An error with a null or absent id that its HTTP exchange ties to a request whose
    id was readable is reported (2025-11-25 basic/index: "Responses MUST include the
    same ID as the request they correspond to"); one in the body of a GET's or
    DELETE's answer (a 405) answers no JSON-RPC request, so it owes no id.

    JSON-RPC answers a message whose id could not be read with an error whose
    id is null, and MCP keeps that exception ("except in error cases where
    the ID could not be read due a malformed request"). An observer cannot
    see the receiver's parse, so every message of the other side whose id
    could not be read (not JSON, not an object, no shape, an id of the wrong
    type, a batch) grants one such error; an error with a null id without one
    is reported. State: one small counter per conversation and side.
    """

    id = "id.null"
    gated = frozenset({"request", "result", "error"})
    envelope_gated = gated  # an integer or string id, not in a batch: no state touched
    severity = "error"
    summary = "`id` is null on a request or on a response whose request id was readable"
    spec = f"{BASIC}#requests"
    kinds = frozenset({"request", "result", "error", "invalid"})
    record_types = frozenset({Http})
    record_phases = frozenset({"request", "post-request"})  # (it remembers requests only)

    def __init__(self) -> None:
        self._credits: dict[tuple[str, str], int] = {}
        self._batch_seq = -1
        self._no_request: Lru[str, None] = Lru(MAX_KEYS)  # GET/DELETE exchanges
        self._undecoded: Lru[str, None] = Lru(MAX_KEYS)  # exchanges of an undecodable request

    def _grant(self, ctx: MessageContext) -> None:
        key = (ctx.conversation.key, ctx.entry.dir)
        self._credits[key] = min(self._credits.get(key, 0) + 1, CREDIT_LIMIT)

    def on_message(self, ctx: MessageContext) -> Findings:
        entry = ctx.entry
        kind = entry.kind
        # The common case first: a request or response with a valid id, not in a batch.
        # A message whose text opens with "{" is no batch (no lazy ``ctx.batch`` then).
        raw = entry.record.raw
        if kind != "invalid" and raw is not None and raw[:1] == "{":
            msg_id = entry.id
            if type(msg_id) is str or type(msg_id) is int:
                return None
        elif entry.seq != self._batch_seq and ctx.batch:
            self._batch_seq = entry.seq
            self._grant(ctx)  # a batch may be rejected whole, with one null-id error
        if kind == "invalid":
            self._grant(ctx)
            return None
        if kind == "request":
            if not is_valid_id(entry.id):
                self._grant(ctx)
            if entry.id is None:
                return [ctx.finding("request has a null id (MCP ids MUST NOT be null)")]
            return None
        absent = entry.id is UNSET
        if entry.id is not None and not absent:
            return None
        if kind == "result":
            if absent:
                return None  # no id at all: jsonrpc.shape's (it is no response)
            return [ctx.finding("result has a null id (MCP ids MUST NOT be null)")]
        request = ctx.request
        what = "no id" if absent else "a null id"
        if request is not None and is_valid_id(request.id):
            # Paired by its HTTP exchange: the request's id was readable, so it is owed.
            return [
                ctx.finding(
                    f"error has {what}, but it answers {ctx.method or '?'} whose id "
                    f"{show(request.id)} was readable (the id MUST be echoed)",
                    also=[request.seq],
                )
            ]
        if absent or entry.ch in self._no_request:
            return None  # an error the server sent on its own: no request, no id to echo
        if entry.ch in self._undecoded:
            return None  # it answers a body mcpeek could not decode: its id is unknown
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

    def on_record(self, record: Record, conversation: Conversation | None) -> Findings:
        """Remember the HTTP exchanges that carry no JSON-RPC request (GET, DELETE),
        and those whose request body mcpeek could not decode (``undecoded``: the
        message in it, and its id, are unknown here, so a null-id error answering it
        may be right)."""
        if isinstance(record, Http) and record.phase == "request":
            if record.method != "POST":
                self._no_request.put(record.x, None)
            elif record.undecoded:
                self._undecoded.put(record.x, None)
        return None

    def on_conversation_end(self, conversation: Conversation) -> Findings:
        for side in ("c2s", "s2c"):
            self._credits.pop((conversation.key, side), None)
        return None


class IdType(Rule):
    id = "id.type"
    gated = frozenset({"request"})
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


IN_FLIGHT = frozenset({"id_in_flight"})


class IdReused(Rule):
    """A request id the same sender still has in flight (both eras), or, in the legacy
    era, one it already used in the session.

    Whether an earlier request is still in flight is what correlation noted on the
    request's attempt (``Attempt.id_in_flight``: unanswered and not cancelled, a
    timed-out request included), so in the modern era the engine calls this rule
    only on a request so noted (``facts_needed``). In the legacy era it is called on
    every request, to remember each id sent since the last ``initialize`` in the
    compact :class:`UsedIds`. Modern HTTP traffic without a session mixes every
    client of an origin in one conversation, so two clients may rightly use the same
    id there: it is not checked.
    """

    id = "id.reused"
    severity = "error"
    summary = "a request id the same sender still has unanswered (legacy: any id used before)"
    spec = f"{BASIC}#requests"
    kinds = frozenset({"request"})

    @classmethod
    def facts_needed(
        cls, kind: str, method: str | None, era: str | None, direction: str
    ) -> frozenset[str]:
        return IN_FLIGHT if era == "modern" else frozenset()  # (legacy: every id is kept)

    def __init__(self) -> None:
        self._used: dict[tuple[str, str], UsedIds] = {}  # (conversation, sender) → ids

    def on_message(self, ctx: MessageContext) -> Findings:
        entry = ctx.entry
        conversation = ctx.conversation
        if conversation.key == ORIGIN:
            return None
        key = _key(entry.id)
        if entry.dir == "c2s" and entry.method == "initialize":
            # A new legacy session begins: what went before (a server/discover
            # probe of a dual-era client) is not "within the same session".
            for direction in ("c2s", "s2c"):
                self._used[(conversation.key, direction)] = UsedIds()
        used = self._used.get((conversation.key, entry.dir))
        if used is None:
            used = self._used[(conversation.key, entry.dir)] = UsedIds()
        # A request's attempt is the one correlation just appended (what ctx.attempt
        # finds, without the lazy lookup).
        attempts = ctx.flow.attempts
        attempt = attempts[-1] if attempts and attempts[-1].request is entry else ctx.attempt
        earlier = attempt.id_in_flight if attempt is not None else None
        findings: list[Finding] | None = None
        if earlier is not None:
            method, seq = earlier
            if not (entry.method == "initialize" and method == "server/discover"):
                findings = [
                    ctx.finding(
                        f"request id {show(entry.id)} is still in flight from the "
                        f"{SIDE.get(entry.dir, entry.dir)} ({method} at seq {seq})",
                        also=[seq],
                    )
                ]
        elif ctx.era == "legacy" and key in used:
            findings = [
                ctx.finding(
                    f"request id {show(entry.id)} was already used by the "
                    f"{SIDE.get(entry.dir, entry.dir)} in this session"
                )
            ]
        used.add(key)
        return findings

    def on_conversation_end(self, conversation: Conversation) -> Findings:
        for direction in ("c2s", "s2c"):
            self._used.pop((conversation.key, direction), None)
        return None


def _key(msg_id: Any) -> Any:
    """:func:`id_key`, with its common cases (a string, an integer) inline."""
    kind = type(msg_id)
    return msg_id if kind is str or kind is int else id_key(msg_id)
