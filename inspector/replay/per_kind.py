"""A bound on what a run says about one kind of thing a peer can repeat without end.

A live server that floods its stdout with lines that are not JSON would
otherwise get one note (and one flag) per line, all kept in memory until the
report. :class:`PerKind` lets the first few of each kind through and counts
the rest, so the report ends with one line per kind saying how many more.
"""

from __future__ import annotations

from collections.abc import Iterator

SAID_PER_KIND = 10  # as many as a proxy prints flags per rule


class PerKind:
    """Counts, per kind, what was to be said; admits the first ``limit`` of each."""

    def __init__(self, limit: int = SAID_PER_KIND) -> None:
        self.limit = limit
        self._counts: dict[str, int] = {}  # kinds are rule IDs or a handful of notes

    def admit(self, kind: str) -> bool:
        """Count one more of ``kind``: True while it is among the first ``limit``."""
        count = self._counts[kind] = self._counts.get(kind, 0) + 1
        return count <= self.limit

    def unsaid(self) -> Iterator[tuple[str, int]]:
        """Each kind that went over the limit, with how many of it were not let through."""
        for kind, count in self._counts.items():
            if count > self.limit:
                yield kind, count - self.limit

    def total_unsaid(self) -> int:
        return sum(more for _kind, more in self.unsaid())
