"""How a conversation's requests end with their HTTP exchange (a mixin of
:class:`~mcpeek.inspector.analysis.conversation.Conversation`).

On Streamable HTTP a request travels in an exchange (a POST and its response
stream): a client that closes the stream cancels what it still waits for
(2026-07-28), and an exchange mcpeek answered itself, or whose body it could
not decode, ends its requests without blaming the server.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcpeek.inspector.analysis.era import Declared
from mcpeek.inspector.analysis.flow import Flow
from mcpeek.inspector.analysis.pending import Key, Pending, Request


class ChannelEndings:
    if TYPE_CHECKING:  # what the conversation holds
        declared: Declared
        pending: Pending
        in_flight: dict[Key, Request]
        channel_flows: dict[str, Flow]

        def _end(self, flow: Flow) -> None: ...

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
        for key, request in list(self.in_flight.items()):
            if request[0] is flow:
                self.pending.retire(key, request)
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
                self.pending.retire(key, (flow, attempt))
                flow.status = status
                self._end(flow)
