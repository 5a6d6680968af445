"""How a reader following a growing capture waits for more of it."""

from __future__ import annotations

import time
from collections.abc import Callable


class Polling:
    """Waits of ``shortest`` seconds while records come; once they stop, each empty
    look doubles the wait, up to ``longest`` (``None``: it stays ``shortest``).

    A follower left running beside an idle session (the live checks) would
    otherwise wake 50 times a second to find nothing. ``wait`` is what waits: an
    Event's ``wait`` lets whoever steers the follower cut a long wait short, so that
    being told to stop is no slower for it.
    """

    def __init__(
        self,
        shortest: float,
        longest: float | None = None,
        wait: Callable[[float], object] = time.sleep,
    ) -> None:
        self.shortest = shortest
        self.longest = shortest if longest is None else max(longest, shortest)
        self._wait = wait
        self.next_wait = shortest  # seconds the next empty look waits

    def idle(self) -> None:
        """Nothing new: wait, then wait longer next time."""
        self._wait(self.next_wait)
        self.next_wait = min(self.next_wait * 2, self.longest)

    def came(self) -> None:
        """Something new: back to short waits."""
        self.next_wait = self.shortest
