"""What ``mcpeek replay`` sends, planned from a capture before anything is sent.

The plan is the client's side of the recorded conversation, in capture
order: the handshake the recording made (a legacy ``initialize`` and its
``notifications/initialized``, or a modern ``server/discover``) comes first
because it came first, then every request and notification the client sent.
What the client sent in *answer* to the server (a legacy
``elicitation/create`` answered mid-call) is not a step: the live server asks
again, and :meth:`ReplayPlan.recorded_request` finds the recorded answer then
(or that the recorded client never answered it: then nothing is sent).

Each request step says whether replay must wait for its live response before
the next step: it does when the recorded response arrived before the next
thing the client sent, so concurrent requests stay concurrent and a
cancellation still reaches a request in flight. A multi round-trip retry
(attempt 2, 3, …) always waits for its predecessor: it must carry the
``requestState`` the *live* server just issued (:func:`retry_message`).

On HTTP each step keeps the headers its POST was recorded with and the
session id it carried, so the transport can send the same headers with the
live session id instead. Everything here is pure: it reads a loaded capture
and returns values. Giving a planned message its live ids is
:mod:`~mcpeek.inspector.replay.replay_ids`'s.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import msgspec

from mcpeek.inspector.act.made import made_answers_of
from mcpeek.inspector.analysis.flow import Flow
from mcpeek.inspector.jsonrpc import deeper_than
from mcpeek.inspector.records import AnyRecord, Http, Msg, wire_bytes
from mcpeek.inspector.replay.canonical import request_key

#: Messages nested deeper are not replayed nor compared (copying and diffing walk
#: them recursively); a real one nests a few dozen levels at most.
MAX_DEPTH = 200
NESTED_TOO_DEEP: Any = object()  # what decode gives for one (not jsonrpc.TOO_DEEP, a detail text)


@dataclass
class ClientStep:
    """One message the recorded client sent, to be sent again."""

    seq: int
    kind: Literal["request", "notification"]
    message: dict[str, Any]
    method: str | None
    flow: Flow | None = None  # the recorded flow of a request
    attempt: int = 0  # its index in flow.attempts (MRTR retries are 1, 2, …)
    wait: bool = True  # wait for its live response before the next step
    headers: list[tuple[str, str]] = field(default_factory=list)  # recorded HTTP headers
    session: str | None = None  # the Mcp-Session-Id it carried
    issued_session: str | None = None  # initialize: the one its recorded response issued

    @property
    def name(self) -> str | None:
        return self.flow.name if self.flow is not None else None


@dataclass
class HttpStep:
    """A recorded HTTP request without a JSON-RPC body: the legacy GET stream, DELETE."""

    seq: int
    method: str
    headers: list[tuple[str, str]]
    session: str | None


Step = ClientStep | HttpStep


@dataclass
class RecordedServerRequest:
    """A request the recorded server sent, and what the recorded client answered."""

    method: str
    params: Any
    answer: dict[str, Any] | None  # {"result": …} or {"error": …}; None: never answered
    key: bytes
    used: bool = False


@dataclass
class ReplayPlan:
    steps: list[Step]
    flows: list[Flow]  # the recorded client flows that are compared, in order
    server_requests: list[RecordedServerRequest]
    era: str | None
    transport: str
    notes: list[str] = field(default_factory=list)
    # Flows sent again for what they set up (the handshake before selected flows,
    # replay_select.py) but not compared: their live answers are not reported.
    support: list[Flow] = field(default_factory=list)

    def recorded_request(self, method: str | None, params: Any) -> RecordedServerRequest | None:
        """The recorded server request a live one stands for: the same method and params
        first, else the first unused one of the same method, else any of it; None when
        the recorded server never sent that method."""
        same = [r for r in self.server_requests if r.method == method]
        if not same:
            return None
        key = request_key(method, params)
        chosen = (
            next((r for r in same if not r.used and r.key == key), None)
            or next((r for r in same if not r.used), None)
            or same[-1]
        )
        chosen.used = True
        return chosen

    def answer_for(self, method: str | None, params: Any) -> dict[str, Any] | None:
        """The recorded client's answer to a live server request (see
        :meth:`recorded_request`); None when there is none to give."""
        chosen = self.recorded_request(method, params)
        return copy.deepcopy(chosen.answer) if chosen is not None else None


def decode(record: Msg) -> Any:
    """A recorded message's JSON value; ``None`` if it is not JSON, :data:`NESTED_TOO_DEEP`
    if it nests deeper than replay copies and compares."""
    data = wire_bytes(record)
    try:
        value = msgspec.json.decode(data)
    except msgspec.DecodeError:
        return None
    except RecursionError:
        return NESTED_TOO_DEEP
    return NESTED_TOO_DEEP if too_deep(data, value) else value


def too_deep(data: bytes, value: Any) -> bool:
    """Whether ``value`` (decoded from ``data``) nests deeper than :data:`MAX_DEPTH`."""
    if data.count(b"[") + data.count(b"{") <= MAX_DEPTH:  # too few brackets to nest so deep
        return False
    return deeper_than(value, MAX_DEPTH)


def _sendable(record: Http | None, notes: list[str]) -> list[tuple[str, str]]:
    """The recorded headers of ``record`` that can be sent again: a value the capture
    keeps as Base64 (its bytes are not UTF-8, ``headers_b64``) is left out, with a note."""
    if record is None or not record.headers:
        return []
    encoded = set(record.headers_b64 or ())
    if not encoded:
        return list(record.headers)
    for i in sorted(encoded):
        if i < len(record.headers):
            note = f"header {record.headers[i][0]} holds bytes that are not UTF-8: not sent"
            if note not in notes:
                notes.append(note)
    return [h for i, h in enumerate(record.headers) if i not in encoded]


def _header(headers: Iterable[tuple[str, str]] | None, name: str) -> str | None:
    for key, value in headers or ():
        if key.lower() == name:
            return value
    return None


def build_plan(records: Sequence[AnyRecord], flows: Sequence[Flow], transport: str) -> ReplayPlan:
    """Plan the replay of a capture's records, correlated into ``flows``."""
    attempts: dict[int, tuple[Flow, int]] = {}
    server_requests: list[RecordedServerRequest] = []
    for flow in flows:
        for index, attempt in enumerate(flow.attempts):
            attempts[attempt.request.seq] = (flow, index)
        if flow.sender == "s2c" and flow.attempts:
            # A request the recorded client never answered is kept too (answer None):
            # replay then leaves the live one unanswered as well.
            request = decode(flow.attempts[0].request.record)
            response = decode(flow.response.record) if flow.response is not None else {}
            if isinstance(request, dict) and isinstance(response, dict):
                answer = (
                    {k: v for k, v in response.items() if k in ("result", "error")}
                    if flow.response is not None
                    else None
                )
                params = request.get("params")
                server_requests.append(
                    RecordedServerRequest(
                        str(flow.method), params, answer, request_key(flow.method, params)
                    )
                )
    requests = {r.x: r for r in records if isinstance(r, Http) and r.phase == "request"}
    responses = {r.x: r for r in records if isinstance(r, Http) and r.phase == "response"}
    with_body = {r.ch for r in records if isinstance(r, Msg) and r.dir == "c2s"}
    # The proxy answered these itself (403, 413): they never reached the server.
    refused = {
        r.x for r in records if isinstance(r, Http) and r.phase == "end" and r.reason == "refused"
    }
    steps: list[Step] = []
    notes: list[str] = []
    # What mcpeek acted on (--fault, -s): a request it answered in place never reached
    # the server, and an answer it made is not the server's to compare with.
    answered_in_place, made_answers = made_answers_of(flows)
    for record in records:
        if isinstance(record, Http) and record.phase == "request":
            if record.x in refused:
                continue
            if record.x not in with_body and record.method in ("GET", "DELETE"):
                session = _header(record.headers, "mcp-session-id")
                steps.append(HttpStep(record.seq, record.method, _sendable(record, notes), session))
            continue
        if not isinstance(record, Msg) or record.dir != "c2s":
            continue
        message = decode(record)
        if not isinstance(message, dict):
            what = (
                "a batch"
                if isinstance(message, list)
                else "nested too deeply"
                if message is NESTED_TOO_DEEP
                else "a message that is not JSON-RPC"
            )
            notes.append(f"message #{record.seq} is {what}: not replayed")
            continue
        if "method" not in message:
            continue  # an answer to a server request: given again when the server asks
        if record.seq in answered_in_place:
            notes.append(f"message #{record.seq} was answered by mcpeek in place: not replayed")
            continue
        request = requests.get(record.ch)
        headers = _sendable(request, notes)
        response = responses.get(record.ch)
        kind: Literal["request", "notification"] = "request" if "id" in message else "notification"
        owner: Flow | None = None
        index = 0
        if record.seq in attempts:
            owner, index = attempts[record.seq]
        steps.append(
            ClientStep(
                record.seq,
                kind,
                message,
                message["method"] if isinstance(message["method"], str) else None,
                owner,
                index,
                headers=headers,
                session=_header(headers, "mcp-session-id"),
                issued_session=_header(response.headers if response else None, "mcp-session-id"),
            )
        )
    decide_waits(steps)
    compared = [
        f
        for f in flows
        if f.sender == "c2s"
        and f.attempts
        and f.attempts[0].request.seq in _sent(steps)
        and f.number not in made_answers
    ]
    notes.extend(
        f"flow {number}: its recorded answer was made by mcpeek: not compared"
        for number in sorted(made_answers)
        if any(f.number == number and f.attempts[0].request.seq in _sent(steps) for f in flows)
    )
    era = next((f.era for f in flows if f.era is not None), None)
    return ReplayPlan(steps, compared, server_requests, era, transport, notes)


def _sent(steps: Sequence[Step]) -> set[int]:
    return {s.seq for s in steps if isinstance(s, ClientStep)}


def decide_waits(steps: list[Step]) -> None:
    """A request waits when its recorded answer came before the client's next step."""
    for position, step in enumerate(steps):
        if not isinstance(step, ClientStep) or step.kind != "request":
            continue
        step.wait = False
        if step.flow is None:
            continue
        response = step.flow.attempts[step.attempt].response
        if response is None:
            continue
        following = steps[position + 1 :]
        step.wait = not following or response.seq < following[0].seq
