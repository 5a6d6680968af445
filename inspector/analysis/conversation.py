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

Memory stays bounded by what is in flight: answered and cancelled requests
are remembered in a bounded window (to pair duplicates and late answers),
and a flow that has ended is handed out (``ended``) and forgotten.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from mcpeek.inspector.analysis.era import Declared
from mcpeek.inspector.analysis.flow import Attempt, Entry, Flow
from mcpeek.inspector.analysis.logs import TaskOwners, log_owner
from mcpeek.inspector.analysis.origin import exchange_request, shared_progress, shared_target
from mcpeek.inspector.analysis.peek import UNSET, ParamsPeek, PeekEnvelope, ResultPeek, id_key

MRTR_METHODS = frozenset({"tools/call", "prompts/get", "resources/read"})
RECENT_LIMIT = 4096
QUEUE_LIMIT = 64  # requests waiting behind one in-flight id
OTHER_SIDE = {"c2s": "s2c", "s2c": "c2s"}
#: The status of a notification that one of several requests of a sessionless origin
#: may own: an observer cannot tell which, so the rules say nothing about it.
AMBIGUOUS = "ambiguous"

NewFlow = Callable[[str, str, str | None], Flow]
Ended = Callable[[Flow], None]


class Conversation:
    def __init__(self, key: str, transport: str, new_flow: NewFlow, ended: Ended) -> None:
        self.key = key
        self.transport = transport
        self.declared = Declared()
        self._new_flow = new_flow
        self._ended = ended
        self.in_flight: dict[tuple[Any, ...], tuple[Flow, Attempt]] = {}
        # requests whose id a newer request reused while they were in flight
        self.queued: dict[tuple[Any, ...], list[tuple[Flow, Attempt]]] = {}
        # answered, cancelled or overdue requests, still pairable for a while
        self.recent: OrderedDict[tuple[Any, ...], tuple[Flow, Attempt]] = OrderedDict()
        self.progress: dict[Any, Flow] = {}
        self.recent_progress: OrderedDict[Any, Flow] = OrderedDict()
        self.subscriptions: dict[Any, Flow] = {}
        self.tasks = TaskOwners()
        self.awaiting_retry: list[Flow] = []
        self.channel_flows: dict[str, Flow] = {}
        self.message_count = 0
        self.closed = False
        self.shared_origin = key == "http:origin"

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
            flow = self._retry_target(entry, params) if self.awaiting_retry else None
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
            attempt.log_level = meta.log_level is not UNSET
            if meta.progress_token is not UNSET:
                # Each side's requests have their own tokens: key by the requester.
                attempt.progress_token = (sender, id_key(meta.progress_token))
                self.progress[self._progress_key(attempt.progress_token, entry.ch)] = flow
        key = self._key(sender, entry.id, entry.ch)
        earlier = self.in_flight.pop(key, None)
        if earlier is not None:
            # The same id while the first is still in flight (id.reused): both may be
            # answered. The next answer goes to the newer request (a client that gave
            # up on an ignored probe and reused its id waits for the newer one); the
            # older waits behind it, and is in flight again once it is answered.
            queue = self.queued.setdefault(key, [])
            queue.append(earlier)
            if len(queue) > QUEUE_LIMIT:  # bounded: the oldest waiting one gives up
                dropped, _ = queue.pop(0)
                dropped.status = "unanswered"
                self._end(dropped)
        self.in_flight[key] = (flow, attempt)  # inserted last: expiry relies on order
        if method == "subscriptions/listen":
            self.subscriptions[id_key(entry.id)] = flow
        if sender == "c2s" and self.transport == "http":
            self.channel_flows[entry.ch] = flow
        entry.flow = flow.number
        return flow

    def _key(self, requester: str, msg_id: Any, channel: str) -> tuple[Any, ...]:
        """How a request is found again. Modern HTTP traffic of one origin may come
        from several clients with the same ids; each answer comes back on its own
        exchange, so there the exchange is part of the key."""
        kind = type(msg_id)  # id_key() of the usual ids, without the call
        key = msg_id if kind is int or kind is str else id_key(msg_id)
        if self.shared_origin and requester == "c2s":
            return (requester, key, channel)
        return (requester, key)

    def _retry_target(self, entry: Entry, params: ParamsPeek) -> Flow | None:
        """The ``input_required`` flow this client request retries, if it is a retry
        (asked only while some flow awaits its retry)."""
        if entry.method not in MRTR_METHODS or (
            params.request_state is UNSET and params.input_responses is UNSET
        ):
            return None
        target = params.uri if entry.method == "resources/read" else params.name
        same = [
            f
            for f in self.awaiting_retry
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

    def _notification(self, entry: Entry, params: ParamsPeek) -> Flow:
        method = entry.method
        flow: Flow | None = None
        if entry.dir == "s2c":
            self.declared.on_server_notification(entry.seq, method, params)
        if method == "notifications/progress":
            token = (OTHER_SIDE.get(entry.dir, ""), id_key(params.progress_token))
            if self.shared_origin:
                flow, known = shared_progress(self.progress, self.recent_progress, token, entry.ch)
            else:
                flow = self.progress.get(token) or self.recent_progress.get(token)
                known = flow is not None
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
            flow = log_owner(params, self.in_flight.items(), self.tasks, self._requested_token)
        if flow is None:
            return self._alone(entry, "notification")
        flow.notifications.append(entry)
        entry.flow = flow.number
        return flow

    def _progress_key(self, token: tuple[Any, ...], channel: str) -> tuple[Any, ...]:
        """Several clients of a sessionless origin may pick the same token: there a
        token is one exchange's (its progress comes on that exchange's stream)."""
        return (*token, channel) if self.shared_origin else token

    def _requested_token(self, token: Any) -> Flow | None:
        """The client request that gave this progress token (still or lately running)."""
        key = ("c2s", id_key(token))
        return self.progress.get(key) or self.recent_progress.get(key)

    def _cancel(self, entry: Entry, params: ParamsPeek) -> Flow:
        target_key = id_key(params.request_id)
        target = (entry.dir, target_key)
        if self.shared_origin and entry.dir == "c2s":
            shared = shared_target(self.in_flight, self.recent, target)
            if shared is None:
                return self._alone(entry, AMBIGUOUS)
            target = shared
        found = self.in_flight.get(target)
        earlier = None if found is not None else self.recent.get(target)
        if found is None and earlier is None:
            # A server tearing down the client's listen stream (before or after its result)
            other = (OTHER_SIDE.get(entry.dir, ""), target_key)
            for table in (self.in_flight, self.recent):
                hit = table.get(other)
                if hit is not None and hit[0].method == "subscriptions/listen":
                    target = other
                    if table is self.in_flight:
                        found = hit
                    else:
                        earlier = hit
                    break
        if found is None:
            if earlier is None:
                return self._alone(entry, "notification")
            flow = earlier[0]
            flow.cancel = flow.cancel or entry
            entry.flow = flow.number
            return flow
        flow, attempt = found
        flow.cancel = entry
        entry.flow = flow.number
        self._retire(target, flow, attempt)
        if not flow.timed_out:
            flow.status = "cancelled"
            self._end(flow)
        return flow

    def _response(self, entry: Entry, parts: PeekEnvelope) -> Flow:
        key = self._key(OTHER_SIDE.get(entry.dir, ""), entry.id, entry.ch)
        if (entry.id is None or entry.id is UNSET) and self.transport == "http":
            key = exchange_request(self.in_flight, entry) or key
        found = self.in_flight.pop(key, None)
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
        self._next_in_line(key)
        self.recent[key] = found
        if len(self.recent) > RECENT_LIMIT:  # one in, one out: the window stays bounded
            self.recent.popitem(last=False)
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

    def _next_in_line(self, key: tuple[Any, ...]) -> None:
        """The request whose id a newer one reused is in flight again (newest first)."""
        queue = self.queued.get(key)
        if queue:
            self.in_flight[key] = queue.pop()
            if not queue:
                del self.queued[key]

    def _retire(self, key: tuple[Any, ...], flow: Flow, attempt: Attempt) -> None:
        self.in_flight.pop(key, None)
        self._next_in_line(key)
        self.recent[key] = (flow, attempt)
        if len(self.recent) > RECENT_LIMIT:
            self.recent.popitem(last=False)

    def _end(self, flow: Flow) -> None:
        """Hand an ended flow out; keep only a bounded memory of its tokens."""
        for attempt in flow.attempts:
            token = attempt.progress_token
            if token is UNSET:
                continue
            token = self._progress_key(token, attempt.request.ch)
            if self.progress.get(token) is flow:
                del self.progress[token]
                self.recent_progress[token] = flow
                if len(self.recent_progress) > RECENT_LIMIT:
                    self.recent_progress.popitem(last=False)
        if flow.method == "subscriptions/listen" and flow.attempts:
            self.subscriptions.pop(id_key(flow.attempts[0].request.id), None)
        self._ended(flow)

    def end_channel(self, channel: str, *, client_closed: bool = False) -> None:
        """An HTTP exchange ended: its stream can carry nothing more.

        A client closing a stream on which its request is still pending
        cancels that request (2026-07-28 cancellation over Streamable HTTP).
        """
        flow = self.channel_flows.pop(channel, None)
        if not client_closed or flow is None or flow.status != "pending":
            return
        if self.declared.era != "modern":
            return  # 2025-11-25: a disconnect SHOULD NOT be read as a cancellation
        for key, (owner, attempt) in list(self.in_flight.items()):
            if owner is flow:
                self._retire(key, flow, attempt)
        flow.status = "cancelled"
        self._end(flow)

    def end_unjudged(self, channel: str, status: str) -> None:
        """End the requests HTTP exchange ``channel`` carried with ``status``, neither
        in flight nor unanswered, so that no rule blames the server for them:
        ``by-proxy`` (mcpeek answered itself: a 502 for an unreachable upstream, a
        413) or ``undecoded`` (the server answered in a body mcpeek could not
        decode: what it said is unknown)."""
        self.channel_flows.pop(channel, None)
        for key, (flow, attempt) in list(self.in_flight.items()):
            if attempt.request.ch == channel and flow.status == "pending":
                self._retire(key, flow, attempt)
                flow.status = status
                self._end(flow)

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
        for key, (flow, attempt) in list(self.in_flight.items()):
            if attempt.request.t + timeout > now:
                break  # insertion order: the rest are younger
            if flow.method == "subscriptions/listen":
                continue
            flow.timed_out = True
            flow.status = "unanswered"
            self._retire(key, flow, attempt)
            self._end(flow)
        # A retry waits for a person (an elicitation, a sampling review): give
        # chains ten times the request timeout, at least 10 minutes.
        retry_window = max(timeout * 10, 600.0)
        for flow in list(self.awaiting_retry):
            response = flow.attempts[-1].response
            if response is not None and response.t + retry_window <= now:
                self.awaiting_retry.remove(flow)
                self._end(flow)

    def close(self) -> None:
        """The connection ended: whatever is still open ends now."""
        if self.closed:
            return
        self.closed = True
        while self.in_flight:  # (a retired request lets the next with its id in)
            key, (flow, attempt) = next(iter(self.in_flight.items()))
            flow.status = "closed" if flow.method == "subscriptions/listen" else "unanswered"
            self._retire(key, flow, attempt)
            self._end(flow)
        for flow in self.awaiting_retry:
            self._end(flow)
        self.awaiting_retry.clear()
        self.progress.clear()
        self.channel_flows.clear()
