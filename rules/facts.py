"""What the engine knows of a message before it calls a rule: the facts a rule may need.

A rule says which facts of a message it needs to have anything to do
(:meth:`~mcpeek.rules.base.Rule.facts_needed`, by kind, method, era and direction). The
dispatch row of such messages then has a variant per combination of the facts,
each without the rules whose needs the message lacks, and the engine picks one
by the bits below, tested once per message for all the rules. Most are what
correlation already noted on the flow and its attempts, so that a stateful
rule reads them there instead of being called on every message to keep its own
table (a call costs more than most rules' work on a message: the interpreter's
code and branch caches, not the instructions).

The facts, by bit:

``retry`` (1)
    the flow has more than one attempt (an MRTR retry);
``listen`` (2)
    it is a ``subscriptions/listen`` flow, or its conversation has subscriptions;
``id_in_flight`` (4)
    a request: an earlier request of its sender with its id is still in flight
    (``Attempt.id_in_flight``);
``log_level`` (8)
    a request: its ``_meta`` names a log level, of any value, or may (odd params
    correlation could not read: ``Attempt.log_level``);
``progress`` (16)
    an attempt of the flow carried a progress token;
``answered`` (32)
    an attempt of the flow has its response;
``probe_rejected`` (64)
    the server answered a ``server/discover`` probe of this conversation with an error
    whose code is not a modern one (``Declared.probe_rejected``);
``server_capabilities`` (128)
    the conversation knows the server's capabilities (``Declared.server_capabilities``);
``input_schema``, ``output_schema`` (256, 512)
    the flow's tool is one the server listed (``Declared.tools``) with that schema;
``request_unproven`` (1024)
    a response whose request the conformance gate did not accept in the modern era
    (the engine's :class:`~mcpeek.rules.context.RequestMemo`).
"""

from __future__ import annotations

from mcpeek.inspector.analysis import Conversation, Entry, Flow
from mcpeek.inspector.analysis.peek import UNSET
from mcpeek.rules.context import RequestMemo, attempt_of
from mcpeek.rules.gate import LISTEN as LISTEN_METHOD

FACTS = (
    "retry",
    "listen",
    "id_in_flight",
    "log_level",
    "progress",
    "answered",
    "probe_rejected",
    "server_capabilities",
    "input_schema",
    "output_schema",
    "request_unproven",
)
(
    RETRY,
    LISTEN,
    ID_IN_FLIGHT,
    LOG_LEVEL,
    PROGRESS,
    ANSWERED,
    PROBE_REJECTED,
    SERVER_CAPABILITIES,
    INPUT_SCHEMA,
    OUTPUT_SCHEMA,
    REQUEST_UNPROVEN,
) = (1 << n for n in range(len(FACTS)))
#: the facts of a request's own attempt, and those read from every attempt of the flow
OF_REQUEST = ID_IN_FLIGHT | LOG_LEVEL
OF_ATTEMPTS = PROGRESS | ANSWERED
OF_TOOL = INPUT_SCHEMA | OUTPUT_SCHEMA


def mask(needs: frozenset[str]) -> int:
    """The bits of these facts (a name not in :data:`FACTS` is a rule's bug: it raises)."""
    bits = 0
    for need in needs:
        bits |= 1 << FACTS.index(need)
    return bits


def shown(
    asked: int, entry: Entry, flow: Flow, conversation: Conversation, requests: RequestMemo
) -> int:
    """The bits of the facts in ``asked`` that this message shows (the others: 0)."""
    attempts = flow.attempts
    bits = 0
    if asked & RETRY and len(attempts) > 1:
        bits = RETRY
    if asked & LISTEN and (flow.method == LISTEN_METHOD or conversation.subscriptions):
        bits |= LISTEN
    if asked & OF_REQUEST and entry.kind == "request":
        attempt = attempts[-1]  # (the one correlation just appended for it)
        if attempt.id_in_flight is not None:
            bits |= ID_IN_FLIGHT
        if attempt.log_level is not UNSET:
            bits |= LOG_LEVEL
    if asked & OF_ATTEMPTS:
        for attempt in attempts:
            if attempt.progress_token is not UNSET:
                bits |= PROGRESS
            if attempt.response is not None:
                bits |= ANSWERED
    if asked & PROBE_REJECTED and conversation.declared.probe_rejected is not None:
        bits |= PROBE_REJECTED
    if asked & SERVER_CAPABILITIES and conversation.declared.server_capabilities is not None:
        bits |= SERVER_CAPABILITIES
    if asked & OF_TOOL and flow.name is not None:
        tool = conversation.declared.tools.get(flow.name)
        if isinstance(tool, dict):
            if isinstance(tool.get("inputSchema"), dict):
                bits |= INPUT_SCHEMA
            if isinstance(tool.get("outputSchema"), dict):
                bits |= OUTPUT_SCHEMA
    if asked & REQUEST_UNPROVEN and _unproven(entry, flow, requests):
        bits |= REQUEST_UNPROVEN
    return bits & asked  # (a group of facts is read at once: only those asked count)


def _unproven(entry: Entry, flow: Flow, requests: RequestMemo) -> bool:
    """Whether the request a response answers was not accepted by the gate as modern
    (``MessageContext.request_conformant``; no such request: as not accepted)."""
    attempt = attempt_of(entry, flow)
    return attempt is None or requests.accepted_in(attempt.request.seq) != "modern"
