"""What one conversation has in flight, by the keys correlation looks things up by.

:class:`Pending` keeps the tables; :class:`~mcpeek.inspector.analysis.conversation.Conversation`
decides what each message does to them. Requests are keyed by *sender and id*
(``1`` and ``"1"`` are different ids; on a sessionless HTTP origin the exchange
too), progress tokens by the requester that gave them, subscriptions by their id.

Memory stays bounded by what is in flight: an answered, cancelled or overdue
request moves to a bounded window of recent ones (to pair a duplicate or late
answer), so does the token of an ended flow, and at most :data:`QUEUE_LIMIT`
requests wait behind one reused id.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from mcpeek.inspector.analysis.flow import Attempt, Flow
from mcpeek.inspector.analysis.origin import shared_progress, shared_target
from mcpeek.inspector.analysis.peek import UNSET, id_key

RECENT_LIMIT = 4096
QUEUE_LIMIT = 64  # requests waiting behind one in-flight id
OVERDUE_PER_ID = 8  # requests retired unanswered kept per id (id.reused's; a bound)
OTHER_SIDE = {"c2s": "s2c", "s2c": "c2s"}

Key = tuple[Any, ...]
Request = tuple[Flow, Attempt]


class Pending:
    def __init__(self, *, shared_origin: bool) -> None:
        self.shared_origin = shared_origin
        self.in_flight: dict[Key, Request] = {}
        # requests whose id a newer request reused while they were in flight
        self.queued: dict[Key, list[Request]] = {}
        # answered, cancelled or overdue requests, still pairable for a while
        self.recent: OrderedDict[Key, Request] = OrderedDict()
        # requests retired unanswered and not cancelled (overdue, given up), by key: their
        # sender has not had an answer, so their id is still taken (the last few of each)
        self.overdue: OrderedDict[Key, list[Request]] = OrderedDict()
        self.progress: dict[Any, Flow] = {}
        self.recent_progress: OrderedDict[Any, Flow] = OrderedDict()
        self.subscriptions: dict[Any, Flow] = {}

    # -- requests -------------------------------------------------------------------
    def key(self, requester: str, msg_id: Any, channel: str) -> Key:
        """How a request is found again. Modern HTTP traffic of one origin may come
        from several clients with the same ids; each answer comes back on its own
        exchange, so there the exchange is part of the key."""
        kind = type(msg_id)  # id_key() of the usual ids, without the call
        key = msg_id if kind is int or kind is str else id_key(msg_id)
        if self.shared_origin and requester == "c2s":
            return (requester, key, channel)
        return (requester, key)

    def add(self, key: Key, request: Request) -> Flow | None:
        """A new request in flight; returns the flow that gave up waiting, if one did.

        The same id while the first is still in flight (id.reused): both may be
        answered. The next answer goes to the newer request (a client that gave up
        on an ignored probe and reused its id waits for the newer one); the older
        waits behind it, and is in flight again once it is answered.
        """
        dropped: Flow | None = None
        earlier = self.in_flight.pop(key, None)
        if earlier is not None:
            queue = self.queued.setdefault(key, [])
            queue.append(earlier)
            if len(queue) > QUEUE_LIMIT:  # bounded: the oldest waiting one gives up
                dropped, _ = queue.pop(0)
        self.in_flight[key] = request  # inserted last: expiry relies on order
        return dropped

    def still_in_flight(self, key: Key) -> tuple[str | None, int] | None:
        """The method and seq of the last request under ``key`` whose sender has had no
        answer yet, if there is one (id.reused's question, asked of a new request before
        :meth:`add`): the one in flight, or one retired overdue and not answered or
        cancelled since."""
        found = self.in_flight.get(key)
        retired = self.overdue.get(key) if self.overdue else None
        if retired is not None:
            # (those answered late or cancelled since are forgotten here)
            retired[:] = [r for r in retired if r[1].response is None and r[0].cancel is None]
            if not retired:
                del self.overdue[key]
            elif found is None or retired[-1][1].request.seq > found[1].request.seq:
                found = retired[-1]
        return None if found is None else (found[0].method, found[1].request.seq)

    def answered(self, key: Key) -> Request | None:
        """The request in flight under ``key``, now answered (remembered as recent)."""
        found = self.in_flight.pop(key, None)
        if found is not None:  # (the common path, every response: no helper calls)
            if self.queued:
                self._next_in_line(key)
            recent = self.recent
            recent[key] = found
            if len(recent) > RECENT_LIMIT:  # one in, one out: the window stays bounded
                recent.popitem(last=False)
        return found

    def cancel_target(
        self, sender: str, request_id: Any
    ) -> tuple[Key, Request | None, Request | None] | None:
        """The request a cancellation from ``sender`` names: its key, and the request
        if it is in flight, else if it is recent (both ``None``: unknown). ``None``
        when several requests of a sessionless origin could be meant."""
        target_key = id_key(request_id)
        target = (sender, target_key)
        if self.shared_origin and sender == "c2s":
            shared = shared_target(self.in_flight, self.recent, target)
            if shared is None:
                return None
            target = shared
        found = self.in_flight.get(target)
        earlier = None if found is not None else self.recent.get(target)
        if found is None and earlier is None:
            # A server tearing down the client's listen stream (before or after its result)
            other = (OTHER_SIDE.get(sender, ""), target_key)
            for table in (self.in_flight, self.recent):
                hit = table.get(other)
                if hit is not None and hit[0].method == "subscriptions/listen":
                    target = other
                    if table is self.in_flight:
                        found = hit
                    else:
                        earlier = hit
                    break
        return target, found, earlier

    def retire(self, key: Key, request: Request) -> None:
        """A request cancelled or overdue: no longer in flight, still pairable."""
        self.in_flight.pop(key, None)
        self._next_in_line(key)
        self._remember(key, request)
        if request[0].cancel is None:
            overdue = self.overdue
            retired = overdue.get(key)
            if retired is None:
                retired = overdue[key] = []
                if len(overdue) > RECENT_LIMIT:  # bounded as the window of recent ones
                    overdue.popitem(last=False)
            retired.append(request)
            retired.sort(key=lambda r: r[1].request.seq)  # (a requeued older one may come last)
            del retired[:-OVERDUE_PER_ID]

    def _next_in_line(self, key: Key) -> None:
        """The request whose id a newer one reused is in flight again (newest first)."""
        queue = self.queued.get(key)
        if queue:
            self.in_flight[key] = queue.pop()
            if not queue:
                del self.queued[key]

    def _remember(self, key: Key, request: Request) -> None:
        self.recent[key] = request
        if len(self.recent) > RECENT_LIMIT:  # one in, one out: the window stays bounded
            self.recent.popitem(last=False)

    # -- progress tokens and subscriptions -----------------------------------------------
    def progress_key(self, token: Key, channel: str) -> Key:
        """Several clients of a sessionless origin may pick the same token: there a
        token is one exchange's (its progress comes on that exchange's stream)."""
        return (*token, channel) if self.shared_origin else token

    def progress_flow(self, token: Key, channel: str) -> tuple[Flow | None, bool]:
        """The flow a progress notification with ``token`` belongs to, and whether the
        token is known at all (known but no flow: several could own it)."""
        if self.shared_origin:
            return shared_progress(self.progress, self.recent_progress, token, channel)
        flow = self.progress.get(token) or self.recent_progress.get(token)
        return flow, flow is not None

    def requested_token(self, token: Any) -> Flow | None:
        """The client request that gave this progress token (still or lately running)."""
        key = ("c2s", id_key(token))
        return self.progress.get(key) or self.recent_progress.get(key)

    def ended(self, flow: Flow) -> None:
        """A flow ended: its tokens move to the recent window, its subscription goes."""
        for attempt in flow.attempts:
            token = attempt.progress_token
            if token is UNSET:
                continue
            token = self.progress_key(token, attempt.request.ch)
            if self.progress.get(token) is flow:
                del self.progress[token]
                self.recent_progress[token] = flow
                if len(self.recent_progress) > RECENT_LIMIT:
                    self.recent_progress.popitem(last=False)
        if flow.method == "subscriptions/listen" and flow.attempts:
            self.subscriptions.pop(id_key(flow.attempts[0].request.id), None)
