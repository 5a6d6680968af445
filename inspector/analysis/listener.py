"""What the :class:`~mcpeek.inspector.analysis.analyzer.Analyzer` tells its listeners.

Listeners subclass :class:`AnalysisListener` and override what they need:
``on_message`` (every message, with its flow), ``on_flow_end`` (a flow
reached a final status; a late answer can end it again, with ``flow.late``),
``on_record`` (every record, for the HTTP and process events),
``on_conversation_end`` and ``on_proxy_answered``.
"""

from __future__ import annotations

from mcpeek.inspector.analysis.conversation import Conversation
from mcpeek.inspector.analysis.flow import Entry, Flow
from mcpeek.inspector.records import Record


class AnalysisListener:
    #: Whether :meth:`on_record` also gets the answers mcpeek gave itself (its 502
    #: for an unreachable upstream): a view shows them, the rules judge no server by them.
    sees_proxy_answers = False

    def on_record(self, record: Record, conversation: Conversation | None) -> None:
        """Every record, before its message (if any) is correlated."""

    def on_message(self, entry: Entry, flow: Flow, conversation: Conversation) -> None:
        """A message, now part of ``flow``."""

    def on_flow_end(self, flow: Flow, conversation: Conversation) -> None:
        """``flow`` reached a final status. For a message that ends a flow (its
        response, its cancellation), this comes after that message's ``on_message``.
        Without ``keep_flows``, the bytes of the flow's messages are dropped after
        this call (ids and correlation facts stay)."""

    def on_conversation_end(self, conversation: Conversation) -> None:
        """The connection ended; its open flows were ended first."""

    def on_proxy_answered(self, exchange: str) -> None:
        """mcpeek answered HTTP exchange ``exchange`` itself, after its messages were
        correlated (for a listener that does not see proxy answers: it learns no more
        of that exchange)."""
