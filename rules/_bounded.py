"""Bounded rule state: what a rule remembers never grows with the capture.

A rule keeps its state on its instance, keyed by conversation. A capture may
hold any number of conversations, and a hostile server any number of tool
names, cursors or URIs, so both levels are bounded: :class:`Lru` forgets its
oldest entries past a limit, and :class:`PerConversation` is an :class:`Lru`
of per-conversation states made on first use (at most
:data:`MAX_CONVERSATIONS`). A rule drops a conversation's state when the
conversation ends.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

from inspector.analysis import Conversation

MAX_CONVERSATIONS = 256  # conversations a rule keeps state for
MAX_KEYS = 4096  # names, cursors or URIs a rule keeps per conversation

K = TypeVar("K")
V = TypeVar("V")


class Lru(OrderedDict[K, V]):
    """A dict that forgets its oldest entries beyond ``limit``."""

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.limit = limit

    def put(self, key: K, value: V) -> None:
        self[key] = value
        self.move_to_end(key)
        while len(self) > self.limit:
            self.popitem(last=False)


class PerConversation(Generic[V]):
    """Per-conversation state, bounded in the number of conversations."""

    def __init__(self, factory: Callable[[], V], limit: int = MAX_CONVERSATIONS) -> None:
        self._factory = factory
        self._states: Lru[str, V] = Lru(limit)

    def __call__(self, conversation: Conversation) -> V:
        state = self._states.get(conversation.key)
        if state is None:
            state = self._factory()
        self._states.put(conversation.key, state)
        return state

    def peek(self, conversation: Conversation) -> V | None:
        return self._states.get(conversation.key)

    def drop(self, conversation: Conversation) -> None:
        self._states.pop(conversation.key, None)
