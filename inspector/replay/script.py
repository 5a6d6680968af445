"""The server side of a capture, cut into what answers each client message.

A mock server needs, for every request the client sent in the recording,
the list of things the server did in answer, in order and with their
delays: the progress and log notifications tied to the request, the
requests the server asked of the client in the middle of it (a legacy
``elicitation/create`` on the call's stream, which the mock must wait to
see answered before it goes on), and finally the response. That list is a
*plan* of :class:`Step` objects; one recorded request and its plan is a
:class:`Call`. An MRTR chain is several calls (one per attempt), told apart
by the ``requestState`` each attempt carried.

Correlation (which notification belongs to which request) is the
Analyzer's: :func:`build_script` runs it over the records and reads the
flows. Server messages that belong to no request (a ``roots/list`` a legacy
server sends after ``notifications/initialized``, a ``list_changed``) are
*anchored* to the client message just before them and sent when the live
client sends that message again.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Literal

import msgspec

from mcpeek.inspector.analysis import AnalysisListener, Analyzer, Conversation, Entry, Flow
from mcpeek.inspector.analysis.flow import Attempt
from mcpeek.inspector.jsonrpc import MessageDecoder
from mcpeek.inspector.records import AnyRecord, Header
from mcpeek.inspector.replay.canonical import Pointer, canonical, request_key
from mcpeek.inspector.replay.rawjson import member_bytes

SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
MRTR_FIELDS = ("inputResponses", "requestState")
HANDSHAKES = frozenset({"initialize", "server/discover"})

# "stray": a response that answered no request of this plan (an orphan the server
# sent): replayed byte for byte, its recorded id kept, as the capture shows it.
StepKind = Literal["response", "notification", "request", "await", "stray"]


class Step(msgspec.Struct, gc=False):
    """One thing the server did: send ``data`` ``delay`` seconds after the previous
    step (the first: after the request), or (``await``) wait for the client's
    answer to the server request whose recorded id is ``server_id``."""

    kind: StepKind
    data: bytes = b""
    delay: float = 0.0
    method: str | None = None
    server_id: bytes | None = None  # a server request's recorded id, as written
    progress: bool = False  # params.progressToken is the request's: substitute it
    subscription: bool = False  # params._meta subscriptionId is the request's id


class Call(msgspec.Struct):
    """One recorded client request and the plan that answered it."""

    seq: int
    method: str
    params: Any
    key: bytes  # request_key without the MRTR members (see :func:`match_key`)
    state: bytes | None  # canonical requestState the request carried, if any
    steps: list[Step]
    after: list[Step]  # unowned server messages sent after the response
    issued_state: Any = msgspec.UNSET  # the requestState its input_required result issued


class Script(msgspec.Struct):
    era: str | None
    calls: dict[tuple[bytes, bytes | None], list[Call]]
    by_method: dict[str, list[Call]]
    anchored: dict[bytes, list[list[Step]]]  # a client notification's key → reactions
    opening: list[Step]  # server messages before any client message
    server_messages: int

    def methods(self) -> list[str]:
        return sorted(self.by_method)


def match_key(
    method: str | None, params: Any, ignore: Sequence[Pointer]
) -> tuple[bytes, bytes | None]:
    """The request's key without ``inputResponses``/``requestState``, and that state."""
    state: bytes | None = None
    if isinstance(params, dict) and any(f in params for f in MRTR_FIELDS):
        if "requestState" in params:
            state = canonical(params["requestState"])
        params = {k: v for k, v in params.items() if k not in MRTR_FIELDS}
    return request_key(method, params, ignore), state


class _Collect(AnalysisListener):
    def __init__(self) -> None:
        self.entries: list[tuple[Entry, Flow]] = []

    def on_message(self, entry: Entry, flow: Flow, conversation: Conversation) -> None:
        self.entries.append((entry, flow))


def build_script(records: Iterable[AnyRecord], ignore: Sequence[Pointer] = ()) -> Script:
    collect = _Collect()
    analyzer = Analyzer([collect], keep_flows=True, timeout=float("inf"))
    for record in records:
        analyzer.feed(record)
    analyzer.finish()
    return _Builder(collect.entries, ignore, analyzer).script()


class _Builder:
    def __init__(
        self, entries: list[tuple[Entry, Flow]], ignore: Sequence[Pointer], analyzer: Analyzer
    ) -> None:
        self.entries = entries
        self.ignore = ignore
        self.http = isinstance(analyzer.header, Header) and analyzer.header.transport == "http"
        self.decoder = MessageDecoder()
        eras = [c.era for c in analyzer.conversations.values() if c.era]
        self.era = eras[0] if eras else None
        # every attempt of a client flow, and what each owns
        self.attempts: list[tuple[Flow, Attempt]] = []
        self.owned: dict[int, list[Entry]] = {}  # id(attempt) -> s2c entries + awaits
        self.unowned: list[Entry] = []

    def script(self) -> Script:
        flows: dict[int, Flow] = {}
        for _, flow in self.entries:
            flows.setdefault(flow.number, flow)
        for flow in flows.values():
            if flow.sender == "c2s":
                self.attempts += [(flow, a) for a in flow.attempts]
        server_messages = 0
        for entry, flow in self.entries:
            if entry.dir != "s2c":
                continue
            server_messages += 1
            if entry.kind in ("result", "error") and flow.sender == "c2s":
                continue  # a response: part of its own attempt
            owner = self._owner(entry, flow)
            if owner is None:
                self.unowned.append(entry)
                continue
            self.owned.setdefault(id(owner), []).append(entry)
            if entry.kind == "request" and flow.response is not None:
                self.owned[id(owner)].append(flow.response)  # wait for the client's answer
        return self._assemble(server_messages)

    def _owner(self, entry: Entry, flow: Flow) -> Attempt | None:
        if flow.sender == "c2s" and flow.attempts and entry.kind == "notification":
            owner = None
            for attempt in flow.attempts:
                if attempt.request.seq < entry.seq:
                    owner = attempt
            return owner
        log = entry.kind == "notification" and entry.method == "notifications/message"
        if entry.kind != "request" and not log:
            return None
        live = [
            a
            for f, a in self.attempts
            if f.method != "subscriptions/listen"
            and a.request.seq < entry.seq
            and (a.response is None or a.response.seq > entry.seq)
            and (not self.http or a.request.ch == entry.ch)
            and (not log or f.sender == "c2s")
        ]
        if log:
            # A log line the analysis leaves on its own (nothing on the wire ties it to
            # a request) is still replayed where it was sent: inside the one call that
            # was running then, not after that call's response.
            return live[0] if len(live) == 1 else None
        return max(live, key=lambda a: a.request.seq) if live else None

    def _assemble(self, server_messages: int) -> Script:
        calls: dict[tuple[bytes, bytes | None], list[Call]] = {}
        by_method: dict[str, list[Call]] = {}
        by_seq: dict[int, Call] = {}
        for flow, attempt in sorted(self.attempts, key=lambda fa: fa[1].request.seq):
            call = self._call(flow, attempt)
            if call is None:
                continue
            by_seq[call.seq] = call
            calls.setdefault((call.key, call.state), []).append(call)
            by_method.setdefault(call.method, []).append(call)
        anchored: dict[bytes, list[list[Step]]] = {}
        opening: list[Step] = []
        client = [e for e, _ in self.entries if e.dir == "c2s" and e.kind != "result"]
        for entry in self.unowned:
            anchor = None
            for candidate in client:
                if candidate.seq < entry.seq and candidate.kind in ("request", "notification"):
                    anchor = candidate
            step = self._step(entry, entry.t - (anchor.t if anchor else entry.t))
            if anchor is None:
                opening.append(step)
            elif anchor.kind == "request" and anchor.seq in by_seq:
                by_seq[anchor.seq].after.append(step)
            elif anchor.kind == "notification":
                params = anchor.message(self.decoder).params_value()
                key = request_key(anchor.method, params, self.ignore)
                reactions = anchored.setdefault(key, [])
                reactions.append([step])
        return Script(self.era, calls, by_method, anchored, opening, server_messages)

    def _call(self, flow: Flow, attempt: Attempt) -> Call | None:
        request = attempt.request
        if request.method is None:
            return None
        params = request.message(self.decoder).params_value()
        key, state = match_key(request.method, params, self.ignore)
        events = sorted(self.owned.get(id(attempt), []), key=lambda e: e.seq)
        if attempt.response is not None:
            events.append(attempt.response)
        steps: list[Step] = []
        clock = request.t
        for event in events:
            if event.dir == "c2s":  # the client answered a server request: wait for it
                raw = member_bytes(event.wire(), ("id",))
                steps.append(Step("await", server_id=raw))
            else:
                steps.append(self._step(event, event.t - clock, request))
            clock = event.t
        issued: Any = msgspec.UNSET
        if attempt.result_type == "input_required":
            issued = attempt.issued_state
        return Call(request.seq, request.method, params, key, state, steps, [], issued)

    def _step(self, entry: Entry, delay: float, request: Entry | None = None) -> Step:
        data = entry.wire()
        kind: StepKind = "notification"
        if entry.kind in ("result", "error"):
            kind = "response" if request is not None else "stray"
        elif entry.kind == "request":
            kind = "request"
        step = Step(kind, data, max(0.0, delay), entry.method)
        if kind == "request":
            step.server_id = member_bytes(data, ("id",))
        if kind == "notification" and request is not None:
            request_id = member_bytes(request.wire(), ("id",))
            step.progress = member_bytes(data, ("params", "progressToken")) is not None
            sub = member_bytes(data, ("params", "_meta", SUBSCRIPTION_ID))
            step.subscription = sub is not None and sub == request_id
        return step
