"""Holding the modern-only rules' findings on a server until it shows it is modern.

A modern client may talk to a legacy server (a dual-era probe, a client pinned to
2026-07-28): the conversation then speaks modern on the client's side while the
server answers under its own, legacy, rules. What a modern-only rule finds in a
*server's* message therefore applies only once the server itself has shown it is
modern (``Declared.server_modern``, read from the traffic). This is the one place
that decides it for every modern-only rule: until then such a finding is held (a
bounded few per conversation, the latest kept), released when the sign comes,
and dropped when the conversation ends without it. Findings on the client's
messages are not held: the client declared its own era.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mcpeek.inspector.analysis import Conversation
from mcpeek.rules.families._bounded import MAX_CONVERSATIONS, Lru

HELD_LIMIT = 64  # findings held per conversation


class ServerEraHold:
    """Per-engine: the reports held per conversation key (both levels bounded)."""

    def __init__(self) -> None:
        #: conversation key → the reports held (empty most of the time: the engine
        #: looks here before it calls :meth:`release`)
        self.held: Lru[str, list[Any]] = Lru(MAX_CONVERSATIONS)

    @staticmethod
    def waits(conversation: Conversation | None) -> bool:
        """Whether a modern-only finding on this conversation's server must wait."""
        return conversation is not None and conversation.declared.server_modern is None

    def hold(self, conversation: Conversation, report: Any) -> None:
        held = self.held.get(conversation.key)
        if held is None:
            held = []
            self.held.put(conversation.key, held)
        held.append(report)
        if len(held) > HELD_LIMIT:
            del held[0]

    def release(self, conversation: Conversation, emit: Callable[[Any], None]) -> None:
        """Report what was held once the server has shown it is modern."""
        if not self.held or conversation.declared.server_modern is None:
            return
        held = self.held.pop(conversation.key, None)
        for report in held or ():
            emit(report)

    def drop(self, conversation: Conversation) -> None:
        self.held.pop(conversation.key, None)
