"""Multi round-trip requests: which earlier flow a client request retries, and how long
a chain may wait for its retry.

A result with ``resultType: "input_required"`` leaves its flow waiting; the client's
next request of the same method and target that carries the ``requestState`` the
result issued (or answers its ``inputRequests``) is a new attempt of that flow,
not a flow of its own.
"""

from __future__ import annotations

from mcpeek.inspector.analysis.flow import Entry, Flow
from mcpeek.inspector.analysis.peek import UNSET, ParamsPeek

MRTR_METHODS = frozenset({"tools/call", "prompts/get", "resources/read"})


def retry_target(awaiting: list[Flow], entry: Entry, params: ParamsPeek) -> Flow | None:
    """The ``input_required`` flow (of those ``awaiting`` their retry) this client
    request retries, if it is a retry."""
    if entry.method not in MRTR_METHODS or (
        params.request_state is UNSET and params.input_responses is UNSET
    ):
        return None
    target = params.uri if entry.method == "resources/read" else params.name
    same = [
        f
        for f in awaiting
        if f.method == entry.method and f.name == (target if isinstance(target, str) else None)
    ]
    if not same:
        return None
    if params.request_state is not UNSET:
        for flow in same:
            if flow.attempts[-1].issued_state == params.request_state:
                return flow
    if isinstance(params.input_responses, dict):
        keys = tuple(sorted(params.input_responses))
        for flow in same:
            if flow.attempts[-1].input_request_keys == keys:
                return flow
    return same[0]


def overdue_retries(awaiting: list[Flow], now: float, timeout: float) -> list[Flow]:
    """The chains whose retry never came. A retry waits for a person (an elicitation,
    a sampling review): chains get ten times the request timeout, at least 10 minutes."""
    retry_window = max(timeout * 10, 600.0)
    overdue = []
    for flow in awaiting:
        response = flow.attempts[-1].response
        if response is not None and response.t + retry_window <= now:
            overdue.append(flow)
    return overdue
