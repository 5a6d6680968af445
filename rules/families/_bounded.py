"""Bounded rule state: what a rule remembers never grows with the capture.

A rule keeps its state on its instance, keyed by conversation. A capture may
hold any number of conversations, and a hostile server any number of tool
names, cursors or URIs, so both levels are bounded: :class:`Lru` forgets its
oldest entries past a limit, and :class:`PerConversation` is an :class:`Lru`
of per-conversation states made on first use (at most
:data:`MAX_CONVERSATIONS`). A rule drops a conversation's state when the
conversation ends. :class:`UsedIds` keeps the ids a sender used, compactly.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Callable, Iterable
from typing import Any, Generic, TypeVar

from mcpeek.inspector.analysis import Conversation

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

    def put_all(self, keys: Iterable[K], value: V) -> None:
        """:meth:`put` of each key in turn, trimmed once at the end: the same entries are
        kept (the ``limit`` put last), for one call instead of one per key."""
        for key in keys:
            self[key] = value
            self.move_to_end(key)
        while len(self) > self.limit:
            self.popitem(last=False)


class PerConversation(Generic[V]):
    """Per-conversation state, bounded in the number of conversations."""

    def __init__(self, factory: Callable[[], V], limit: int = MAX_CONVERSATIONS) -> None:
        self._factory = factory
        self._states: Lru[str, V] = Lru(limit)
        # The conversation last asked for and its state: it is the newest entry of
        # _states, so asking for it again changes nothing there (most traffic is of
        # one conversation at a time: no reordering then).
        self._newest: tuple[str, V] | None = None

    def __call__(self, conversation: Conversation) -> V:
        key = conversation.key
        newest = self._newest
        if newest is not None and newest[0] == key:
            return newest[1]
        state = self._states.get(key)
        if state is None:
            state = self._factory()
        self._states.put(key, state)
        self._newest = (key, state)
        return state

    def peek(self, conversation: Conversation) -> V | None:
        return self._states.get(conversation.key)

    def drop(self, conversation: Conversation) -> None:
        self._states.pop(conversation.key, None)
        self._newest = None


#: Per conversation and sender, at most this many id *ranges* (consecutive
#: integers) and this many other ids (strings…) are remembered for the legacy
#: "previously used" check; beyond that the oldest are forgotten.
USED_RANGES_LIMIT = 65536


USED_OTHERS_LIMIT = 65536


class UsedIds:
    """The ids one sender used in a session, compactly.

    Integers are kept as sorted disjoint ranges, so a sender counting
    1, 2, 3… costs one range whatever the length of the session; other ids
    (strings, as most UUID-minting SDKs send) cost one set entry each, about
    100 bytes, up to :data:`USED_OTHERS_LIMIT` (so a few MB at worst).
    """

    __slots__ = ("_ends", "_others", "_starts")

    def __init__(self) -> None:
        self._starts: list[int] = []
        self._ends: list[int] = []
        self._others: dict[Any, None] = {}  # insertion-ordered set

    def __contains__(self, key: Any) -> bool:
        if isinstance(key, int):
            i = bisect_right(self._starts, key) - 1
            return i >= 0 and key <= self._ends[i]
        return key in self._others

    def __len__(self) -> int:
        return len(self._starts) + len(self._others)

    def add(self, key: Any) -> None:
        if not isinstance(key, int):
            self._others[key] = None
            if len(self._others) > USED_OTHERS_LIMIT:
                del self._others[next(iter(self._others))]
            return
        starts, ends = self._starts, self._ends
        if ends and key == ends[-1] + 1:  # the common case: the next integer
            ends[-1] = key
            return
        i = bisect_right(starts, key) - 1
        if i >= 0 and key <= ends[i]:
            return
        left = i >= 0 and ends[i] == key - 1
        right = i + 1 < len(starts) and starts[i + 1] == key + 1
        if left and right:
            ends[i] = ends[i + 1]
            del starts[i + 1], ends[i + 1]
        elif left:
            ends[i] = key
        elif right:
            starts[i + 1] = key
        else:
            starts.insert(i + 1, key)
            ends.insert(i + 1, key)
            if len(starts) > USED_RANGES_LIMIT:
                del starts[0], ends[0]
