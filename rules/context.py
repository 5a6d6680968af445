"""What a rule sees of one message: the entry, its flow and conversation, decoded lazily.

Every decode (the careful envelope, params, result, error, the whole value) and
every lookup rules share (the attempt, the request it answers, ``_meta``)
happens at most once per message, the first time a rule asks, and is shared by
every rule. The plain facts (``seq``, ``kind``, ``method``…) are attributes.

Lazy values are computed by a :class:`Lazy` member of the class (a non-data
descriptor), which Python reaches only while the instance has no attribute of
that name: the value is stored on the instance, so every later look is a plain
attribute read. (Not ``__getattr__``: a class that defines it sends *every*
attribute read through a slower path that Python 3.11 cannot specialise, a few
thousand instructions per message over the rules' reads of ``ctx.entry``,
``ctx.kind``…; nor ``functools.cached_property``, which takes a lock on every
computation in Python 3.11.)
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from mcpeek.inspector.analysis import Attempt, Conversation, Entry, Flow
from mcpeek.inspector.jsonrpc import Message, MessageDecoder, json_value
from mcpeek.inspector.records import Msg, wire_bytes
from mcpeek.rules.base import Finding, Severity

RESPONSE_KINDS = frozenset({"result", "error"})


class MessageContext:
    #: The conformance gate (mcpeek.rules.gate) proved this message conformant: the
    #: engine skips the rules that are ``gated``; others may take it as read too. (A
    #: class default: the engine sets it when the gate accepts.)
    conformant = False

    if TYPE_CHECKING:  # the lazy members, as rules see them
        wire: bytes  # the message's exact bytes
        message: Message  # the careful decode (a batch member is found by its id)
        obj: Any  # the whole message as a JSON value (None if it is not JSON)
        params: Any
        result: Any
        error: Any
        meta: dict[str, Any] | None  # params._meta, or result._meta of a result
        attempt: Attempt | None  # the attempt of the flow a request or response belongs to
        request: Entry | None  # for a response: the request it answers
        request_params: Any  # for a response: its request's params (None if absent)
        #: for a response: the era in which the gate accepted its request (None: it did not)
        request_conformant: str | None
        batch: bool  # the message's bytes are a JSON array

    def __init__(
        self,
        entry: Entry,
        flow: Flow,
        conversation: Conversation,
        decoder: MessageDecoder,
        era: str | None,
        version: str | None,
        requests: RequestMemo | None = None,
    ) -> None:
        self.entry = entry
        self.flow = flow
        self.conversation = conversation
        self.era = era  # the conversation's era (or the one --spec forces)
        self.version = version  # the protocol version in force (or forced)
        self.seq = entry.seq
        self.kind = entry.kind
        #: The message's method; for a response, the method of the request it answers.
        self.method = entry.method if entry.method is not None else flow.method
        self.is_response = entry.kind in RESPONSE_KINDS
        self._decoder = decoder
        self._requests = requests
        #: The lazy members computed so far, one bit each (:data:`LAZY_BITS`), read
        #: here rather than in ``__dict__``: merely reading that turns the instance's
        #: inline attributes into a dict (slower reads for every rule after).
        self.computed = 0
        if self.is_response:
            # Most rules on a response read its attempt and request: computed here, they
            # are plain attributes from the start, not a descriptor call each first time.
            # (What _attempt, _request and _request_conformant give, without the calls.)
            attempt = self.attempt = attempt_of(entry, flow)
            request = self.request = attempt.request if attempt is not None else None
            self.request_conformant = (
                requests.accepted_in(request.seq)
                if request is not None and requests is not None
                else None
            )
            self.computed = RESPONSE_BITS

    def finding(
        self,
        message: str,
        *,
        also: list[int] | tuple[int, ...] = (),
        severity: Severity | None = None,
    ) -> Finding:
        """A finding on this message; ``also`` lists related messages (they come first)."""
        return Finding(msgs=[*also, self.entry.seq], message=message, severity=severity)


# -- the lazy members -------------------------------------------------------------------
def _wire(ctx: MessageContext) -> bytes:
    return wire_bytes(ctx.entry.record)


def _message(ctx: MessageContext) -> Message:
    return member_of(ctx._decoder.decode(ctx.wire), ctx.entry)


def member_of(whole: Message, entry: Entry) -> Message:
    """The message of ``entry``: the whole one, or its member when it is a batch."""
    if whole.kind != "batch":
        return whole
    for item in whole.items:
        if item.kind == entry.kind and item.id == entry.id and item.method == entry.method:
            return item
    return whole


def _obj(ctx: MessageContext) -> Any:
    return json_value(ctx.wire)


def _params(ctx: MessageContext) -> Any:
    return ctx.message.params_value()


def _result(ctx: MessageContext) -> Any:
    return ctx.message.result_value()


def _error(ctx: MessageContext) -> Any:
    return ctx.message.error_value()


def _meta(ctx: MessageContext) -> dict[str, Any] | None:
    holder = ctx.result if ctx.kind == "result" else ctx.params
    meta = holder.get("_meta") if isinstance(holder, dict) else None
    return meta if isinstance(meta, dict) else None


def _attempt(ctx: MessageContext) -> Attempt | None:
    return attempt_of(ctx.entry, ctx.flow)


def attempt_of(entry: Entry, flow: Flow) -> Attempt | None:
    """The attempt of ``flow`` that ``entry`` is the request, the response or a duplicate of."""
    for attempt in reversed(flow.attempts):
        if attempt.request is entry or attempt.response is entry or entry in attempt.duplicates:
            return attempt
    return None


def _request(ctx: MessageContext) -> Entry | None:
    if not ctx.is_response:
        return None
    attempt = ctx.attempt
    return attempt.request if attempt is not None else None


def _request_params(ctx: MessageContext) -> Any:
    """The params of the request (of its member, when it came in a batch)."""
    request = ctx.request
    if request is None:
        return None
    memo = ctx._requests
    if memo is not None:
        found = memo.get(request.seq)
        if found is not None and found[0] is request.record:  # its bytes are not forgotten
            return found[1]
    # A batch member's own params (its own _meta), not the whole array's (none).
    return member_of(request.message(ctx._decoder), request).params_value()


def _request_conformant(ctx: MessageContext) -> str | None:
    request = ctx.request
    memo = ctx._requests
    return memo.accepted_in(request.seq) if request is not None and memo is not None else None


def _batch(ctx: MessageContext) -> bool:
    return is_batch(ctx.entry.record)


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


class Lazy:
    """A lazy member of :class:`MessageContext`: computed the first time a rule reads
    it, then stored on the instance, where later reads find it without coming here (a
    descriptor without ``__set__`` comes after the instance's own attributes)."""

    __slots__ = ("bit", "compute", "name")

    def __init__(self, name: str, compute: Callable[[MessageContext], Any], bit: int) -> None:
        self.name = name
        self.compute = compute
        self.bit = bit

    def __get__(self, ctx: MessageContext | None, owner: type | None = None) -> Any:
        if ctx is None:  # (read on the class: the member itself)
            return self
        value = self.compute(ctx)
        setattr(ctx, self.name, value)
        ctx.computed |= self.bit
        return value


_LAZY: dict[str, Callable[[MessageContext], Any]] = {
    "wire": _wire,
    "message": _message,
    "obj": _obj,
    "params": _params,
    "result": _result,
    "error": _error,
    "meta": _meta,
    "attempt": _attempt,
    "request": _request,
    "request_params": _request_params,
    "request_conformant": _request_conformant,
    "batch": _batch,
}


#: Each lazy member's bit in ``MessageContext.computed``.
LAZY_BITS: dict[str, int] = {name: 1 << n for n, name in enumerate(_LAZY)}


def _install_lazy_members() -> None:
    for name, compute in _LAZY.items():
        setattr(MessageContext, name, Lazy(name, compute, LAZY_BITS[name]))


_install_lazy_members()


class RequestMemo:
    """The params of the last requests, decoded once for their responses' rules.

    Keyed by seq, with the record they came from: a request whose bytes the
    Analyzer has forgotten (a late answer) is read from what is left, as before.
    Both tables forget their oldest entry first: an ``OrderedDict`` does that in
    constant time, where a dict's first live key is found by a scan past every
    slot deleted before it (a few µs a message once the limit is reached).
    """

    LIMIT = 4096
    #: the params of a request longer than this (characters of its record) are not
    #: kept: a 16 MB request's would stay in memory long after its flow ended
    BIG = 1 << 20

    def __init__(self) -> None:
        self._params: OrderedDict[int, tuple[Msg, Any]] = OrderedDict()
        self._accepted: OrderedDict[int, str] = OrderedDict()  # seq → the era it was accepted in

    def accepted(self, seq: int, era: str) -> None:
        """The conformance gate accepted the request ``seq`` (in ``era``)."""
        accepted = self._accepted
        accepted[seq] = era
        if len(accepted) > self.LIMIT:
            accepted.popitem(last=False)

    def accepted_in(self, seq: int) -> str | None:
        return self._accepted.get(seq)

    def get(self, seq: int) -> tuple[Msg, Any] | None:
        return self._params.get(seq)

    def note(self, ctx: MessageContext) -> None:
        """After a request's rules ran: keep its params if a rule decoded them."""
        if not ctx.computed & PARAMS_BIT or ctx.batch:
            return
        record = ctx.entry.record
        if len(record.raw or record.raw_b64 or "") > self.BIG:
            return  # its response's rules decode it again rather than keep it for 4096 more
        params = ctx.params
        memo = self._params
        memo[ctx.seq] = (record, params)
        if len(memo) > self.LIMIT:
            memo.popitem(last=False)


#: The lazy members' bits: ``not ctx.computed & RESULT_BIT`` says no rule read ``result`` yet.
PARAMS_BIT, RESULT_BIT, ERROR_BIT, META_BIT, MESSAGE_BIT, REQUEST_PARAMS_BIT = (
    LAZY_BITS[name] for name in ("params", "result", "error", "meta", "message", "request_params")
)
#: The members a response's context computes at once (see ``MessageContext.__init__``).
RESPONSE_BITS = LAZY_BITS["attempt"] | LAZY_BITS["request"] | LAZY_BITS["request_conformant"]
