"""What a rule is: a small class registered by its catalog ID.

Every check has a stable ID from the rule catalog (``area.what-went-wrong``),
a severity taken from the spec's words (MUST → ``error``, SHOULD →
``warning``, allowed but worth seeing → ``info``), the era it applies to
(``modern``, ``legacy`` or both), and the public URL of the spec section it
enforces. Subclassing :class:`Rule` with an ``id`` registers the class;
nothing keeps a hand-written list.

A rule is pure and synchronous. It overrides the hooks it needs and returns
(or yields) :class:`Finding` objects; the engine turns them into
violations, fills in what it knows (rule, severity, spec) and catches a rule
that raises. A rule keeps its own state on its instance (one instance per
analysis), keyed by conversation where the state is per conversation.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import msgspec

if TYPE_CHECKING:
    from mcpeek.inspector.analysis import Conversation, Flow
    from mcpeek.inspector.records import Record
    from mcpeek.rules.context import MessageContext

Severity = Literal["error", "warning", "info"]
Era = Literal["modern", "legacy"]
SEVERITY_ORDER: dict[str, int] = {"info": 0, "warning": 1, "error": 2}

SPEC_BASE = "https://modelcontextprotocol.io/specification"
MODERN_SPEC = f"{SPEC_BASE}/2026-07-28"
LEGACY_SPEC = f"{SPEC_BASE}/2025-11-25"


class Finding(msgspec.Struct):
    """What a rule reports: the messages involved (offending one last) and why."""

    msgs: list[int]
    message: str
    severity: Severity | None = None  # only when a rule downgrades itself (e.g. a 2025-03-26 batch)


class LateFinding(Finding, kw_only=True):
    """A finding on a message judged after that message's own hook had run (an HTTP
    rule keeps a client's message until its exchange's response head arrives): the
    engine reports it with ``about``'s message, flow and conversation."""

    about: MessageContext


Findings = Iterable[Finding] | None


class Rule:
    registry: ClassVar[dict[str, type[Rule]]] = {}

    id: ClassVar[str] = ""
    severity: ClassVar[Severity] = "error"
    era: ClassVar[Era | None] = None
    summary: ClassVar[str] = ""
    spec: ClassVar[str] = ""
    #: The era docs/rules.md gives a rule that gates itself (``era`` None) because the
    #: engine's gating comes too late or too early for it (e.g. it judges the very
    #: ``initialize`` that switches the era, or HTTP records before their session).
    catalog_era: ClassVar[Era | None] = None
    #: The first protocol version that defines what the rule enforces (e.g. a field
    #: added in 2025-06-18): a conversation of an older version is not judged by it,
    #: since a MUST does not apply to versions that predate it. ``None``: every version.
    since: ClassVar[str | None] = None
    #: The transport a rule's messages can only come from (``stdio``/``http``), so
    #: that, say, the HTTP header rules cost nothing on a stdio capture (an ``http``
    #: rule's ``on_record`` is not called for the messages of a stdio channel either).
    transport: ClassVar[str | None] = None
    #: Which record types ``on_record`` wants (e.g. ``frozenset({Http})``); ``None``: all.
    record_types: ClassVar[frozenset[type] | None] = None
    #: ``on_record`` wants, of the message records, only those whose bytes are a JSON
    #: array (a batch): the engine does not call it for every other message.
    batch_records: ClassVar[bool] = False
    #: Which messages ``on_message`` wants, to spare the others the call:
    #: kinds (``request``, ``notification``, ``result``, ``error``, ``invalid``)
    #: and methods (for a response, its request's method). ``None``: all.
    kinds: ClassVar[frozenset[str] | None] = None
    methods: ClassVar[frozenset[str] | None] = None
    #: The eras (``modern``, ``legacy``, ``None`` while unknown) whose messages
    #: ``on_message`` wants, for a rule whose ``era`` must stay ``None`` because its
    #: other hooks see records of any era (or none yet). ``None``: every era.
    message_eras: ClassVar[frozenset[str | None] | None] = None
    #: Kind → the one direction (``c2s``/``s2c``) whose messages of that kind
    #: ``on_message`` wants; kinds not listed come from both sides.
    directions: ClassVar[Mapping[str, str]] = {}
    #: Kind → the only methods whose messages of that kind ``on_message`` wants (it
    #: cannot fire on the others, so the engine does not call it for them); kinds not
    #: listed: every method ``methods`` allows. E.g. a rule about results of any method
    #: and ``notifications/progress`` only.
    kind_methods: ClassVar[Mapping[str, frozenset[str]]] = {}
    #: What ``on_message`` needs of every message's flow to have anything to do, beyond
    #: its kind and method (:mod:`mcpeek.rules.facts`: ``retry``, ``listen``…); by kind,
    #: method, era and direction: :meth:`facts_needed`. The engine tests them once per message.
    flow_needs: ClassVar[frozenset[str]] = frozenset()
    #: Which flows ``on_flow_end`` wants: their final statuses and their methods
    #: (``None``: all). Most flows end answered, so a rule about the cancelled or
    #: unanswered ones is then not called at all.
    flow_statuses: ClassVar[frozenset[str] | None] = None
    flow_methods: ClassVar[frozenset[str] | None] = None
    #: The kinds of message on which this rule is silent whenever the conformance
    #: gate (:mod:`mcpeek.rules.gate`) accepts the message, and keeps no state: the engine
    #: then skips it. Only for rules whose every check the gate's models imply.
    gated: ClassVar[frozenset[str]] = frozenset()
    #: The kinds of message on which this rule is silent whenever the gate's smaller
    #: check (:mod:`mcpeek.rules.gate_envelope`) proves the envelope of a message it
    #: turned away sound, and keeps no state: the engine then skips it there too.
    envelope_gated: ClassVar[frozenset[str]] = frozenset()
    #: The kinds of message ``on_message`` has nothing to do with while :meth:`idle`
    #: says so (a rule that only flushes what it holds on them): the engine then leaves
    #: it out of those messages' rules, and asks again after any message or conversation
    #: end it did see. Empty: always called.
    idle_kinds: ClassVar[frozenset[str]] = frozenset()
    #: The phases of the ``http`` records ``on_record`` wants (``None``: all of them;
    #: ``late-response`` and ``late-end``: the HTTP rules' tracker held messages for it;
    #: ``post-request``: a POST's request, where ``request`` is any other's;
    #: honoured where a ``Follower`` follows ``http`` records, as the HTTP rules' does).
    record_phases: ClassVar[frozenset[str] | None] = None

    def idle(self) -> bool:
        """Whether ``on_message`` would do nothing on a message of ``idle_kinds`` now."""
        return False

    @classmethod
    def facts_needed(
        cls, kind: str, method: str | None, era: str | None, direction: str
    ) -> frozenset[str]:
        """What ``on_message`` needs of a message of this kind, method (a response's: its
        request's), era and direction to have anything to do (:mod:`mcpeek.rules.facts`):
        on others it is not called. Default: ``flow_needs``, whatever the message."""
        return cls.flow_needs

    def share(self, shared: dict[type, Any]) -> None:
        """Join what the engine's rules share, keyed by its class (``shared`` is one per
        engine, and every rule is asked in turn): a family of rules that follow the same
        thing (the HTTP exchanges) follows it once. Default: nothing shared."""

    def ungate(self) -> None:
        """After :meth:`share`: leave out any shortcut of the rule's own that stands on a
        conformance check, as the engine's gate off leaves its own (the verifying
        engine's twin, which must call every hook). Default: none."""

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        if not cls.id:
            return
        if cls.id in Rule.registry and Rule.registry[cls.id] is not cls:
            raise TypeError(f"rule id {cls.id!r} is registered twice")
        if not (cls.summary and cls.spec.startswith(SPEC_BASE) and "#" in cls.spec):
            raise TypeError(f"rule {cls.id!r} needs a summary and a spec URL with an anchor")
        Rule.registry[cls.id] = cls

    # Hooks: override what the rule needs. Each returns findings (or None).
    def on_message(self, ctx: MessageContext) -> Findings:
        """Every message, once correlated (``ctx.flow`` is its flow)."""
        return None

    def on_flow_end(self, flow: Flow, conversation: Conversation) -> Findings:
        """A flow reached its final status (may be called again for a late answer)."""
        return None

    def on_record(self, record: Record, conversation: Conversation | None) -> Findings:
        """Every record (``http``, ``event``…), before its message is correlated."""
        return None

    def on_conversation_end(self, conversation: Conversation) -> Findings:
        """The connection ended."""
        return None

    def on_proxy_answered(self, exchange: str) -> Findings:
        """mcpeek answered HTTP exchange ``exchange`` itself (a 502, a 413…): no server
        will, and the rule sees neither that response nor the exchange's end."""
        return None


class Follower:
    """What some rules share (:meth:`Rule.share`) and the engine keeps up to date itself:
    it gets every record of ``record_types`` and every message of ``transport``, each
    before any rule's hook, so that a rule need not be called just to keep it."""

    transport: ClassVar[str | None] = None
    record_types: ClassVar[frozenset[type]] = frozenset()

    def on_record(self, record: Record) -> str | None:
        """A record of ``record_types`` (a message only if it is not on stdio); for an
        ``http`` record, the phase the rules are to take it as, if it knows better
        (``late-response``, ``late-end``: messages waited for it; see ``record_phases``)."""
        return None

    #: the rules that read what it follows (their ``on_message`` is skipped where it
    #: returns true)
    readers: frozenset[Rule] = frozenset()

    def on_message(self, ctx: MessageContext) -> bool:
        """A message of ``transport``, before the rules' ``on_message``; true when its
        ``readers`` have nothing to do on it now (it keeps it for later), so that the
        engine does not call them just to hear that."""
        return False


def listed_era(rule: type[Rule]) -> str:
    """The era to show for a rule: ``modern``, ``legacy`` or ``both``."""
    return rule.era or rule.catalog_era or "both"


def catalog() -> dict[str, type[Rule]]:
    """Every registered rule by ID (importing :mod:`rules` registers them all)."""
    return dict(sorted(Rule.registry.items()))
