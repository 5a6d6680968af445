"""Entries and flows: what correlation produces.

An :class:`Entry` is one message as the analyser saw it: where it is in the
capture (``seq``, ``t``, ``dir``, ``ch``), what it is (kind, id, method) and
its record (the exact bytes). The full decode is redone on demand
(:meth:`Entry.message`), so a loaded capture costs little beyond its bytes.

A :class:`Flow` is one *logical* call: the request, its response, the
notifications tied to it (progress, log messages, subscription events), its
cancellation, and, for multi round-trip requests, every attempt of the chain
(``input_required`` → retry → … → final result). Notifications that belong
to no request are flows of their own (status ``notification``), and so are
responses that match no request (status ``orphan``).

Statuses: ``pending`` (in flight), ``input_required`` (waiting for the
retry), ``complete``, ``error`` (a JSON-RPC error), ``tool-error`` (a
``tools/call`` result with ``isError: true``: the tool failed),
``cancelled``, ``unanswered`` (no response by the end or the timeout),
``closed`` (a ``subscriptions/listen`` stream still open when the connection
ended), ``by-proxy`` (mcpeek answered the HTTP request itself, e.g. 502 for an
unreachable upstream: the server never saw it), ``undecoded`` (answered in a
body mcpeek could not decode, such as corrupt gzip), ``orphan`` and
``notification``.
"""

from __future__ import annotations

from typing import Any

import msgspec

from mcpeek.inspector.jsonrpc import Message, MessageDecoder
from mcpeek.inspector.records import Msg, wire_bytes

#: The notifications a flow keeps under a ``notification_window``: the rules read
#: none, a flow line the last one (whether it just joined an ended flow).
NOTIFICATION_WINDOW = 16


class Entry(msgspec.Struct, gc=False):
    seq: int
    t: float
    dir: str
    ch: str
    kind: str
    id: Any
    method: str | None
    record: Msg
    flow: int = 0

    def message(self, decoder: MessageDecoder | None = None) -> Message:
        return (decoder or MessageDecoder()).decode(wire_bytes(self.record))

    def wire(self) -> bytes:
        return wire_bytes(self.record)


class Attempt(msgspec.Struct, gc=False):
    """One JSON-RPC request of a flow and what answered it."""

    request: Entry
    response: Entry | None = None
    duplicates: tuple[Entry, ...] = ()
    result_type: str | None = None
    request_state: Any = msgspec.UNSET  # the requestState the *request* carried
    issued_state: Any = msgspec.UNSET  # the requestState an input_required result issued
    input_request_keys: tuple[str, ...] = ()
    progress_token: Any = msgspec.UNSET
    #: whether the request's ``_meta`` names a logLevel (2026-07-28), as correlation read
    #: it (:func:`~mcpeek.inspector.analysis.peek.log_level_of`)
    log_level: Any = msgspec.UNSET
    #: (method, seq) of an earlier request of the same sender, with the same id, still
    #: in flight when this one was sent (answered by nothing, not cancelled)
    id_in_flight: tuple[str | None, int] | None = None

    @property
    def latency_ms(self) -> float | None:
        if self.response is None:
            return None
        return (self.response.t - self.request.t) * 1000.0


class Flow:
    __slots__ = (
        "attempts",
        "cancel",
        "client_capabilities",
        "conversation",
        "era",
        "late",
        "made_trimmed",
        "method",
        "name",
        "notification_count",
        "notifications",
        "number",
        "orphan",
        "progress_count",
        "sender",
        "status",
        "timed_out",
        "window",
    )

    def __init__(self, number: int, conversation: str, sender: str, method: str | None) -> None:
        self.number = number
        self.conversation = conversation
        self.sender = sender  # who sent the request: "c2s" or "s2c"
        self.method = method
        self.name: str | None = None
        self.attempts: list[Attempt] = []
        self.notifications: list[Entry] = []
        self.notification_count = 0  # every notification, when ``window`` keeps the last only
        # Keep the last ``window`` notifications only (None: all). A streaming reader
        # that shows no flow's messages (the live checks, lint) bounds its memory over
        # a request answered by a million progress notifications.
        self.window: int | None = None
        self.made_trimmed: set[str] = set()  # what mcpeek did to notifications trimmed off
        self.cancel: Entry | None = None
        self.orphan: Entry | None = None  # the lone message of an orphan/notification flow
        self.status = "pending"
        self.era: str | None = None
        self.progress_count = 0
        self.client_capabilities: Any = None
        self.late = False  # answered after it had been declared unanswered
        self.timed_out = False

    def __repr__(self) -> str:
        return f"<Flow {self.number} {self.method} {self.status} ids={self.ids}>"

    def add_notification(self, entry: Entry) -> None:
        self.notification_count += 1
        self.notifications.append(entry)
        if self.window is not None and len(self.notifications) > 2 * self.window:
            # Trimmed in batches: amortised O(1) per notification.
            cut = len(self.notifications) - self.window
            for old in self.notifications[:cut]:
                if old.record.made is not None:
                    self.made_trimmed.add(old.record.made)
            del self.notifications[:cut]

    @property
    def ids(self) -> list[Any]:
        if self.orphan is not None and self.orphan.id is not msgspec.UNSET:
            return [self.orphan.id]
        return [a.request.id for a in self.attempts]

    @property
    def chain(self) -> list[Any]:
        """The ids of an MRTR chain (empty for a single request)."""
        return self.ids if len(self.attempts) > 1 else []

    @property
    def request(self) -> Entry | None:
        return self.attempts[0].request if self.attempts else None

    @property
    def response(self) -> Entry | None:
        return self.attempts[-1].response if self.attempts else None

    @property
    def entries(self) -> list[Entry]:
        """Every message of the flow, in capture order."""
        out: list[Entry] = []
        for attempt in self.attempts:
            out.append(attempt.request)
            if attempt.response is not None:
                out.append(attempt.response)
            out.extend(attempt.duplicates)
        out.extend(self.notifications)
        if self.cancel is not None:
            out.append(self.cancel)
        if self.orphan is not None:
            out.append(self.orphan)
        out.sort(key=lambda e: e.seq)
        return out

    @property
    def msgs(self) -> list[int]:
        return [e.seq for e in self.entries]

    @property
    def started(self) -> float:
        first = self.request or self.orphan
        return first.t if first is not None else 0.0

    @property
    def latency_ms(self) -> float | None:
        """First request to last response: the whole logical call."""
        if not self.attempts or self.attempts[-1].response is None:
            return None
        return (self.attempts[-1].response.t - self.attempts[0].request.t) * 1000.0
