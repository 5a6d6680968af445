"""Replay only some flows: a whole-capture plan cut down to them and what they need.

``mcpeek replay FILE --flow N`` and the viewer's re-run send a few recorded
flows again, not the whole conversation. :func:`select_flows` keeps, of a
:class:`~mcpeek.inspector.replay.replay_plan.ReplayPlan` built from the whole
capture:

- the selected flows' steps: every attempt of a multi round-trip call (the
  replayer sends a retry only when the live server asks for input again);
- the handshake their conversation made (a legacy ``initialize`` and the
  ``notifications/initialized`` after it, or a modern ``server/discover``),
  sent first but not compared (:attr:`ReplayPlan.support`) unless selected;
- a client ``notifications/cancelled`` naming a selected request;
- on HTTP, the legacy GET stream and DELETE of a kept session;
- every recorded server request and its recorded answer (the live server
  may ask the same things mid-call), untouched.

So the same replayer runs it: selection is a plan-level filter, not a second
replay engine. Flow numbers are the ones ``mcpeek show`` and the viewer's
``#`` column print (:attr:`Flow.number`). :func:`matching_flows` picks flows
with the viewer's filter language (:mod:`mcpeek.inspector.filters`).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import replace

from mcpeek.inspector.analysis.flow import Flow
from mcpeek.inspector.filters import Filter
from mcpeek.inspector.records import Violation
from mcpeek.inspector.replay.replay_plan import ClientStep, HttpStep, ReplayPlan, Step, decide_waits
from mcpeek.inspector.views.session import FlowItem

HANDSHAKES = frozenset({"initialize", "server/discover"})
INITIALIZED = "notifications/initialized"
CANCELLED = "notifications/cancelled"


class SelectionError(ValueError):
    """The flows asked for cannot be replayed: ``str()`` is one line for the user."""


def replayable(plan: ReplayPlan) -> dict[int, Flow]:
    """The flows of ``plan`` that can be re-sent (client requests), by number."""
    return {flow.number: flow for flow in plan.flows}


def select_flows(plan: ReplayPlan, numbers: Collection[int], flows: Sequence[Flow]) -> ReplayPlan:
    """``plan`` (of the whole capture, whose flows are ``flows``) cut down to the flows
    numbered ``numbers`` and what they need; raises :class:`SelectionError` for a number
    that is no flow, or no client request the plan sends."""
    sendable = replayable(plan)
    known = {flow.number: flow for flow in flows}
    for number in sorted(set(numbers)):
        if number not in known:
            raise SelectionError(f"there is no flow {number} (the capture has {len(flows)})")
        if number not in sendable:
            flow = known[number]
            raise SelectionError(
                f"flow {number} ({_what(flow)}, sent by the {_side(flow)}) is not a client request:"
                " nothing to re-send"
            )
    chosen = [sendable[n] for n in sorted(set(numbers))]
    conversations = {flow.conversation for flow in chosen}
    first_seq = min(flow.attempts[0].request.seq for flow in chosen)
    handshakes = _handshakes(plan.steps, conversations, first_seq)
    wanted = {flow.number for flow in chosen} | {
        step.flow.number for step in handshakes if step.flow
    }
    sessions = {step.issued_session for step in handshakes if step.issued_session}
    ids = {(flow.conversation, repr(i)) for flow in chosen for i in flow.ids}
    kept: list[Step] = []
    after_initialize = False
    for step in plan.steps:
        if isinstance(step, HttpStep):
            if step.session is not None and step.session in sessions:
                kept.append(replace(step))
            continue
        keep = step.flow is not None and step.flow.number in wanted
        if step.method == INITIALIZED:
            keep = after_initialize
        elif step.method == CANCELLED:
            keep = _cancels(step, ids, conversations)
        if keep:  # a copy: decide_waits sets .wait, and the whole plan's steps stay as they are
            kept.append(replace(step))
        if step.kind == "request":
            after_initialize = keep and step.method == "initialize"
    decide_waits(kept)  # the next step is another one now
    support = [step.flow for step in handshakes if step.flow and step.flow.number not in numbers]
    return ReplayPlan(
        kept,
        chosen,
        plan.server_requests,
        plan.era,
        plan.transport,
        list(plan.notes),
        support=support,
    )


def matching_flows(
    flows: Iterable[Flow], flt: Filter, findings: Iterable[Violation] = ()
) -> list[int]:
    """The numbers of the flows ``flt`` matches, each seen as the viewer's row sees it: with
    the violations of ``findings`` on the flow of the message they name (its last ``msgs``)."""
    items = [FlowItem(flow) for flow in flows]
    row_of_seq = {entry.seq: row for row, item in enumerate(items) for entry in item.flow.entries}
    for finding in findings:
        row = row_of_seq.get(finding.msgs[-1]) if finding.msgs else None
        if row is not None:
            items[row].add_finding(finding)
    return [item.flow.number for item in items if flt(item)]


def _handshakes(steps: Sequence[Step], conversations: set[str], before: int) -> list[ClientStep]:
    """The handshake request of each conversation, the last one before the selection (a
    conversation may start again); a capture keyed otherwise (modern HTTP, sessionless)
    gets the last handshake before the first selected request."""
    last: dict[str, ClientStep] = {}
    latest: ClientStep | None = None
    for step in steps:
        if not isinstance(step, ClientStep) or step.seq > before or step.flow is None:
            continue
        if step.kind == "request" and step.method in HANDSHAKES and step.attempt == 0:
            last[step.flow.conversation] = step
            latest = step
    found = [last[key] for key in sorted(conversations) if key in last]
    if not found and latest is not None:
        found = [latest]
    return found


def _cancels(step: ClientStep, ids: set[tuple[str, str]], conversations: set[str]) -> bool:
    params = step.message.get("params")
    if not isinstance(params, dict) or "requestId" not in params:
        return False
    wanted = repr(params["requestId"])
    return any((conversation, wanted) in ids for conversation in conversations)


def _what(flow: Flow) -> str:
    """What a flow that is no client request is, in a few words."""
    if flow.method:
        return flow.method
    if flow.orphan is not None and flow.orphan.kind in ("result", "error"):
        ids = ", ".join(repr(i) for i in flow.ids)
        return f"an answer to id {ids}, which no request asked"
    return "a message that is not JSON-RPC"


def _side(flow: Flow) -> str:
    return "server" if flow.sender == "s2c" else "client"
