"""Which rules each of the engine's hooks goes to: an index built once per combination.

A rule says declaratively what it wants (``kinds``, ``methods``, ``directions``, ``era``,
``gated``, the facts it needs… see :class:`~mcpeek.rules.base.Rule`). :class:`Dispatch`
turns that into tables keyed by what a message or record shows (a message's kind, method,
era, transport, direction and protocol version; a record's type and channel), each row
built the first time the traffic shows its key. The engine's hot path is then one dict
lookup per message, and a hook is called only on what its rule asked for.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mcpeek.inspector.records import Http, Msg
from mcpeek.rules import facts
from mcpeek.rules.base import Follower, Rule
from mcpeek.rules.gate import Check, Gate
from mcpeek.rules.gate_envelope import build_envelope_check

#: A message's (kind, method, era, transport, direction, protocol version).
MessageKey = tuple[str, str | None, str | None, str, str, str | None]
#: A flow's (era, protocol version, final status, method).
FlowKey = tuple[str | None, str | None, str, str | None]
#: The era of a record that has no conversation yet: every rule may want it.
ANY_ERA = "*"
#: The phases of an ``http`` record (``late-``: as the HTTP tracker refines them,
#: when client messages waited for that response head or end; ``quiet-response``: a
#: head it proved the HTTP rules that vouch for its check silent on; ``post-request``: the
#: request of a POST: ``Rule.record_phases``).
HTTP_PHASES = (
    "request",
    "post-request",
    "response",
    "end",
    "late-response",
    "late-end",
    "quiet-response",
)
#: A record's (type, whether it is a message on stdio, era or ANY_ERA).
RecordKey = tuple[type, bool, str | None]
#: A rule and its ``on_message``, bound once: the engine's loop calls the hook without
#: looking the method up on each of the dozens of rule classes it meets at that one
#: call site (a look-up Python 3.11 cannot specialise there).
MessageHook = tuple[Rule, Callable[[Any], Any]]


# (Classes with __slots__, not NamedTuples: Python 3.11 specialises reads of slots, not
# of a NamedTuple's fields, and the engine reads a few of them per message.)
class MessageRules:
    """The rules for one kind of message: all of them, those left when the gate
    accepts it, and the gate's check of such a message (``None``: no rule of these is
    gated, or the gate never accepts these messages, so it is not asked)."""

    __slots__ = (
        "asked",
        "envelope",
        "enveloped",
        "every",
        "followers",
        "gate",
        "resting",
        "ungated",
        "unread",
        "variants",
        "wakes",
    )

    def __init__(
        self,
        every: list[MessageHook],
        ungated: list[MessageHook],
        gate: Check | None,
        resting: Resting | None = None,
        *,
        wakes: bool = False,
        followers: tuple[Follower, ...] = (),
        envelope: Check | None = None,
        enveloped: list[MessageHook] | None = None,
        variants: dict[int, MessageRules] | None = None,
    ) -> None:
        self.every = every
        self.ungated = ungated
        self.gate = gate
        #: ``every`` and ``ungated`` without the rules that may be idle on these messages
        #: (``Rule.idle_kinds``), for while they all are; ``None``: no such rule here.
        self.resting = resting
        #: Some rule of ``every`` may go idle or wake up (``Rule.idle``) when called.
        self.wakes = wakes
        #: what the engine keeps up to date for the rules before them (``Follower``)
        self.followers = followers
        #: when the gate turns a message away: the check of its envelope alone
        #: (:mod:`mcpeek.rules.gate_envelope`; ``None``: not asked), and ``every`` without
        #: the rules it silences (``Rule.envelope_gated``)
        self.envelope = envelope
        self.enveloped = enveloped
        #: when some rule needs a fact of the message (``Rule.facts_needed``): the rows to
        #: use instead, by the bits of those facts (``asked``, :mod:`~mcpeek.rules.facts`)
        self.variants = variants
        self.asked = 0
        #: by the ``id`` of one of the lists above and the followers that keep the
        #: message: that list without their readers
        self.unread: dict[tuple[int, tuple[Follower, ...]], list[MessageHook]] = {}

    def without_readers(
        self, rules: list[MessageHook], keeping: tuple[Follower, ...]
    ) -> list[MessageHook]:
        """``rules`` (one of this row's lists) without the rules that read one of the
        followers ``keeping`` a message for later (``Follower.on_message``)."""
        key = (id(rules), keeping)
        found = self.unread.get(key)
        if found is None:
            readers = {r for f in keeping for r in f.readers}
            found = self.unread[key] = [h for h in rules if h[0] not in readers]
        return found


class Resting:
    """A message's rules while every rule that may be idle is (see :class:`MessageRules`)."""

    __slots__ = ("enveloped", "every", "ungated", "wakes")

    def __init__(
        self,
        every: list[MessageHook],
        ungated: list[MessageHook],
        wakes: bool,
        enveloped: list[MessageHook] | None = None,
    ) -> None:
        self.every = every
        self.ungated = ungated
        #: some rule left in them may still wake up when called (idle on other kinds only)
        self.wakes = wakes
        self.enveloped = enveloped  # (see MessageRules)


class RecordRules:
    """The rules for one kind of record: those for any of them, and those for a message
    record whose bytes are a batch (``None``: the same ones, so the engine need not look)."""

    __slots__ = ("batches", "followers", "phases", "plain")

    def __init__(
        self,
        plain: list[Rule],
        batches: list[Rule] | None,
        followers: tuple[Follower, ...] = (),
        phases: dict[str, list[Rule]] | None = None,
    ) -> None:
        self.plain = plain
        self.batches = batches
        #: what the engine keeps up to date for the rules before them (``Follower``)
        self.followers = followers
        #: for an ``http`` record some follower follows, ``plain`` by phase
        #: (``Rule.record_phases``)
        self.phases = phases


class Dispatch:
    """The rules of one engine, by hook, and the tables of which of them a hook reaches."""

    def __init__(
        self, rules: list[Rule], *, gate: Gate | None, followers: tuple[Follower, ...] = ()
    ) -> None:
        self._gate = gate  # (None: every rule on every message it may concern, facts or not)
        self._followers = followers
        self._message_rules = [r for r in rules if overrides(r, "on_message")]
        self._flow_rules = [r for r in rules if overrides(r, "on_flow_end")]
        self._record_rules = [r for r in rules if overrides(r, "on_record")]
        self._end_rules = [r for r in rules if overrides(r, "on_conversation_end")]
        #: the rules that may be idle on some messages (``Rule.idle_kinds``)
        self.sleepers = [r for r in self._message_rules if r.idle_kinds]
        # The tables the engine reads first (a missing key: the method below builds it).
        self.message: dict[MessageKey, MessageRules] = {}
        self.flow_end: dict[FlowKey, list[Rule]] = {}
        self.record: dict[RecordKey, RecordRules] = {}
        self.conversation_end: dict[str | None, list[Rule]] = {}

    def message_rules(self, key: MessageKey) -> MessageRules:
        kind, method, era, transport, direction, version = key
        every = [
            r
            for r in self._message_rules
            if applies(r, era, version)
            and (r.transport is None or r.transport == transport)
            and (r.kinds is None or kind in r.kinds)
            and (r.methods is None or method in r.methods)
            and (r.message_eras is None or era in r.message_eras)
            and r.directions.get(kind, direction) == direction
            and (kind not in r.kind_methods or method in r.kind_methods[kind])
        ]
        needs = {r: facts.mask(r.facts_needed(kind, method, era, direction)) for r in every}
        if self._gate is None:  # (what the verifying twin compares with: facts unread too)
            needs = dict.fromkeys(every, 0)
        asked = 0
        for bits in needs.values():
            asked |= bits
        if asked:
            # A row per combination of the facts asked, each without the rules whose needs
            # the message lacks: calls fewer on most messages, for one test of the facts.
            variants = {
                shown: self._row(key, [r for r in every if needs[r] & shown == needs[r]])
                for shown in range(1 << len(facts.FACTS))
                if shown & asked == shown  # (the engine tests only the facts asked)
            }
            found = self.message[key] = MessageRules([], [], None, variants=variants)
            found.asked = asked
            return found
        found = self.message[key] = self._row(key, every)
        return found

    def _row(self, key: MessageKey, every: list[Rule]) -> MessageRules:
        kind, method, era, transport, direction, version = key
        ungated = [r for r in every if kind not in r.gated]
        check = None
        if len(ungated) < len(every) and self._gate is not None and Gate.may_accept(kind, era):
            check = self._gate.check(era, version, kind, method, direction)
        enveloped = [r for r in every if kind not in r.envelope_gated]
        envelope = None
        if check is not None and len(enveloped) < len(every):
            envelope = build_envelope_check(era, version, kind, method, direction)
        sleepers = [r for r in every if r.idle_kinds]
        resting = None
        if any(kind in r.idle_kinds for r in sleepers):
            awake = [r for r in every if kind not in r.idle_kinds]
            still = any(r.idle_kinds for r in awake)
            awake_ungated = [r for r in ungated if kind not in r.idle_kinds]
            awake_enveloped = [r for r in enveloped if kind not in r.idle_kinds]
            resting = Resting(_hooks(awake), _hooks(awake_ungated), still, _hooks(awake_enveloped))
        followers = tuple(
            f for f in self._followers if f.transport is None or f.transport == transport
        )
        return MessageRules(
            _hooks(every),
            _hooks(ungated),
            check,
            resting,
            wakes=bool(sleepers),
            followers=followers,
            envelope=envelope,
            enveloped=_hooks(enveloped) if envelope is not None else None,
        )

    def flow_end_rules(self, key: FlowKey) -> list[Rule]:
        era, version, status, method = key
        found = self.flow_end[key] = [
            r
            for r in self._flow_rules
            if applies(r, era, version)
            and (r.flow_statuses is None or status in r.flow_statuses)
            and (r.flow_methods is None or method in r.flow_methods)
        ]
        return found

    def record_rules(self, key: RecordKey) -> RecordRules:
        kind, on_stdio, era = key
        # A message on stdio means nothing to the rules of HTTP exchanges.
        batches = [
            r
            for r in self._record_rules
            if (r.record_types is None or kind in r.record_types)
            and not (on_stdio and r.transport == "http")
            and (era == ANY_ERA or applies(r, era))
        ]
        plain = [r for r in batches if not (r.batch_records and kind is Msg)]
        followers = tuple(
            f
            for f in self._followers
            if kind in f.record_types and not (on_stdio and f.transport == "http")
        )
        phases = None
        if kind is Http and followers:
            phases = {
                phase: [r for r in plain if r.record_phases is None or phase in r.record_phases]
                for phase in HTTP_PHASES
            }
        found = self.record[key] = RecordRules(
            plain, batches if plain != batches else None, followers, phases
        )
        return found

    def conversation_end_rules(self, era: str | None) -> list[Rule]:
        # (ends run in every version: they drop the rules' state)
        found = self.conversation_end[era] = [r for r in self._end_rules if applies(r, era)]
        return found


def _hooks(rules: list[Rule]) -> list[MessageHook]:
    return [(rule, rule.on_message) for rule in rules]


def overrides(rule: Rule, hook: str) -> bool:
    return getattr(type(rule), hook) is not getattr(Rule, hook)


def applies(rule: Rule, era: str | None, version: str | None = None) -> bool:
    if rule.since is not None and version is not None and version < rule.since:
        return False  # the version predates what the rule enforces
    return rule.era is None or rule.era == era
