"""The correlation engine of one conversation (a stdio process, an HTTP session or origin).

It pairs each request with its response by *sender and id* (``1`` and
``"1"`` are different ids), ties notifications to the request they belong to
(progress by token, cancellation by ``requestId``, subscription events by
``io.modelcontextprotocol/subscriptionId``, log messages by their HTTP stream
or, on stdio, the one request that asked for them), and links the attempts
of a multi round-trip request into one flow.

A Streamable HTTP origin that issues no session id may serve several clients
at once, and nothing on the wire says which client sent what. There a request
is keyed by its exchange as well, a progress token belongs to its exchange's
request, and a notification that several requests could own (a cancellation
POSTed on its own, progress on a shared stream) is tied to one only when
exactly one fits; otherwise it is ``ambiguous`` and the rules stay silent.

The tables of what is in flight, and their bounded memory of what just ended,
are :class:`~mcpeek.inspector.analysis.pending.Pending`'s; a flow that has
ended is handed out (``ended``) and forgotten.
"""

from __future__ import annotations

from collections.abc import Callable

from mcpeek.inspector.analysis.channels import ChannelEndings
from mcpeek.inspector.analysis.era import Declared
from mcpeek.inspector.analysis.flow import Attempt, Entry, Flow
from mcpeek.inspector.analysis.logs import TaskOwners, log_owner
from mcpeek.inspector.analysis.origin import exchange_request
from mcpeek.inspector.analysis.peek import (
    UNSET,
    ParamsPeek,
    PeekEnvelope,
    ResultPeek,
    id_key,
    log_level_of,
)
from mcpeek.inspector.analysis.pending import Pending
from mcpeek.inspector.analysis.retry import overdue_retries, retry_target

OTHER_SIDE = {"c2s": "s2c", "s2c": "c2s"}
#: The status of a notification that one of several requests of a sessionless origin
#: may own: an observer cannot tell which, so the rules say nothing about it.
AMBIGUOUS = "ambiguous"

NewFlow = Callable[[str, str, str | None], Flow]
Ended = Callable[[Flow], None]


class Conversation(ChannelEndings):
    def __init__(self, key: str, transport: str, new_flow: NewFlow, ended: Ended) -> None:
        self.key = key
        self.transport = transport
        self.declared = Declared()
        self._new_flow = new_flow
        self._ended = ended
        self.shared_origin = key == "http:origin"
        self.pending = Pending(shared_origin=self.shared_origin)
        # The pending tables under the names the rules read them by (the same dicts).
        self.in_flight = self.pending.in_flight
        self.recent = self.pending.recent
        self.progress = self.pending.progress
        self.recent_progress = self.pending.recent_progress
        self.subscriptions = self.pending.subscriptions
        self.tasks = TaskOwners()
        self.awaiting_retry: list[Flow] = []
        self.channel_flows: dict[str, Flow] = {}
        self.message_count = 0
        self.closed = False
        #: What correlation peeked of the message being handled (its listeners may read
        #: it while they hear of that message, instead of decoding the same members).
        self.peeked = PeekEnvelope()

    @property
    def era(self) -> str | None:
        return self.declared.era

    @property
    def protocol_version(self) -> str | None:
        return self.declared.protocol_version

    # -- one message ------------------------------------------------------------
    def handle(self, entry: Entry, parts: PeekEnvelope) -> Flow:
        """Correlate one decoded message; returns the flow it now belongs to."""
        self.message_count += 1
        self.peeked = parts
        kind = entry.kind
        if kind in ("result", "error"):
            return self._response(entry, parts)
        params = parts.params if type(parts.params) is ParamsPeek else parts.params_peek
        if kind == "request":
            return self._request(entry, params)
        if kind == "notification":
            return self._notification(entry, params)
        return self._alone(entry, "orphan")

    def _request(self, entry: Entry, params: ParamsPeek) -> Flow:
        sender = entry.dir
        method = entry.method
        if sender == "c2s":
            era = self.declared.on_client_request(entry.seq, method, params)
            flow = retry_target(self.awaiting_retry, entry, params) if self.awaiting_retry else None
        else:
            era = self.declared.era
            flow = None  # only a client request retries
        attempt = Attempt(request=entry, request_state=params.request_state)
        if flow is None:
            flow = self._new_flow(self.key, sender, method)
            flow.era = era
            target = params.name if method != "resources/read" else params.uri
            if target is UNSET:
                target = params.uri
            flow.name = target if isinstance(target, str) else None
        else:
            self.awaiting_retry.remove(flow)
            flow.status = "pending"
            flow.timed_out = False  # the retry is a new attempt, with its own clock
        flow.attempts.append(attempt)
        meta = params.meta
        if meta is not None:
            if meta.client_capabilities is not UNSET:
                flow.client_capabilities = meta.client_capabilities
            if meta.progress_token is not UNSET:
                # Each side's requests have their own tokens: key by the requester.
                attempt.progress_token = (sender, id_key(meta.progress_token))
                self.progress[self.pending.progress_key(attempt.progress_token, entry.ch)] = flow
        attempt.log_level = log_level_of(params, entry.record)
        key = self.pending.key(sender, entry.id, entry.ch)
        attempt.id_in_flight = self.pending.still_in_flight(key)
        dropped = self.pending.add(key, (flow, attempt))
        if dropped is not None:  # it waited behind too many reuses of its id
            dropped.status = "unanswered"
            self._end(dropped)
        if method == "subscriptions/listen":
            self.subscriptions[id_key(entry.id)] = flow
        if sender == "c2s" and self.transport == "http":
            self.channel_flows[entry.ch] = flow
        entry.flow = flow.number
        return flow

    def _notification(self, entry: Entry, params: ParamsPeek) -> Flow:
        method = entry.method
        flow: Flow | None = None
        if entry.dir == "s2c":
            self.declared.on_server_notification(entry.seq, method, params)
        if method == "notifications/progress":
            token = (OTHER_SIDE.get(entry.dir, ""), id_key(params.progress_token))
            flow, known = self.pending.progress_flow(token, entry.ch)
            if flow is not None:
                flow.progress_count += 1
            elif known:
                return self._alone(entry, AMBIGUOUS)
            elif params.progress_token is not UNSET:
                return self._alone(entry, "orphan")
        elif method == "notifications/cancelled":
            return self._cancel(entry, params)
        if flow is None and params.meta is not None and params.meta.subscription_id is not UNSET:
            flow = self.subscriptions.get(id_key(params.meta.subscription_id))
            if flow is None:
                return self._alone(entry, "orphan")
        if flow is None and entry.dir == "s2c" and self.transport == "http":
            flow = self.channel_flows.get(entry.ch)
        if flow is None and method == "notifications/message" and entry.dir == "s2c":
            owner = self.pending.requested_token
            flow = log_owner(params, self.in_flight.items(), self.tasks, owner)
        if flow is None:
            return self._alone(entry, "notification")
        flow.add_notification(entry)
        entry.flow = flow.number
        return flow

    def _cancel(self, entry: Entry, params: ParamsPeek) -> Flow:
        named = self.pending.cancel_target(entry.dir, params.request_id)
        if named is None:
            return self._alone(entry, AMBIGUOUS)
        target, found, earlier = named
        if found is None:
            if earlier is None:
                return self._alone(entry, "notification")
            flow = earlier[0]
            flow.cancel = flow.cancel or entry
            entry.flow = flow.number
            return flow
        flow = found[0]
        flow.cancel = entry
        entry.flow = flow.number
        self.pending.retire(target, found)
        if not flow.timed_out:
            flow.status = "cancelled"
            self._end(flow)
        return flow

    def _response(self, entry: Entry, parts: PeekEnvelope) -> Flow:
        flow = self._answer(entry, parts)
        if entry.kind == "error" and flow.method == "server/discover" and entry.dir == "s2c":
            self.declared.on_probe_error(entry.seq, parts.error_peek)
        return flow

    def _answer(self, entry: Entry, parts: PeekEnvelope) -> Flow:
        key = self.pending.key(OTHER_SIDE.get(entry.dir, ""), entry.id, entry.ch)
        if (entry.id is None or entry.id is UNSET) and self.transport == "http":
            key = exchange_request(self.in_flight, entry) or key
        found = self.pending.answered(key)
        if found is None:
            earlier = self.recent.get(key)
            if earlier is None or entry.id is None:
                return self._alone(entry, "orphan")
            flow, attempt = earlier
            if attempt.response is None:  # answered after a cancel or a timeout
                attempt.response = entry
                flow.late = True
                if flow.timed_out:
                    self._settle(flow, attempt, entry, parts)
            else:
                attempt.duplicates += (entry,)
            entry.flow = flow.number
            return flow
        flow, attempt = found
        attempt.response = entry
        entry.flow = flow.number
        self._settle(flow, attempt, entry, parts)
        return flow

    def _settle(self, flow: Flow, attempt: Attempt, entry: Entry, parts: PeekEnvelope) -> None:
        method = flow.method
        if entry.kind == "error":
            if entry.dir == "s2c":
                self.declared.on_error(entry.seq, method, parts.error_peek)
            flow.status = "error"
        else:
            result = parts.result if type(parts.result) is ResultPeek else parts.result_peek
            if entry.dir == "s2c":
                self.declared.on_result(entry.seq, method, result)
            result_type = result.result_type
            attempt.result_type = result_type if type(result_type) is str else None
            if result_type == "input_required":
                attempt.issued_state = result.request_state
                if isinstance(result.input_requests, dict):
                    attempt.input_request_keys = tuple(sorted(result.input_requests))
                flow.status = "input_required"
                self.awaiting_retry.append(flow)
                return
            # A tool that failed answers with a result, not a JSON-RPC error:
            # told apart so that it does not pass for a success.
            failed_tool = method == "tools/call" and result.is_error is True
            if result.task is not UNSET:
                self.tasks.created(result.task, flow)
            flow.status = "tool-error" if failed_tool else "complete"
        self._end(flow)

    def _end(self, flow: Flow) -> None:
        """Hand an ended flow out; keep only a bounded memory of its tokens."""
        self.pending.ended(flow)
        self._ended(flow)

    def _alone(self, entry: Entry, status: str) -> Flow:
        flow = self._new_flow(self.key, entry.dir, entry.method)
        flow.orphan = entry
        flow.status = status
        flow.era = self.declared.era
        entry.flow = flow.number
        self._end(flow)
        return flow

    # -- time and endings ---------------------------------------------------------
    def expire(self, now: float, timeout: float) -> None:
        """Declare unanswered what waited longer than ``timeout`` (still pairable later)."""
        for key, request in list(self.in_flight.items()):
            flow, attempt = request
            if attempt.request.t + timeout > now:
                break  # insertion order: the rest are younger
            if flow.method == "subscriptions/listen":
                continue
            flow.timed_out = True
            flow.status = "unanswered"
            self.pending.retire(key, request)
            self._end(flow)
        for flow in overdue_retries(self.awaiting_retry, now, timeout):
            self.awaiting_retry.remove(flow)
            self._end(flow)

    def close(self) -> None:
        """The connection ended: whatever is still open ends now."""
        if self.closed:
            return
        self.closed = True
        while self.in_flight:  # (a retired request lets the next with its id in)
            key, request = next(iter(self.in_flight.items()))
            flow = request[0]
            flow.status = "closed" if flow.method == "subscriptions/listen" else "unanswered"
            self.pending.retire(key, request)
            self._end(flow)
        for flow in self.awaiting_retry:
            self._end(flow)
        self.awaiting_retry.clear()
        self.progress.clear()
        self.channel_flows.clear()
