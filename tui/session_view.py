"""One capture as the app shows it: its model, its filter, the rows that pass.

The app keeps a :class:`SessionView` per open capture, so switching between
captures keeps each one's filter, matching rows and cursor. Rows are item
indexes in an ``array`` (4 bytes a row); new rows are filtered as they
arrive, and rows whose flow changed (a status, a violation) are looked at
again, since they may enter or leave the filter.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Iterable
from pathlib import Path

from mcpeek.inspector.filters import Filter, filter_rows
from mcpeek.inspector.views.session import SessionModel
from mcpeek.tui.loader import Progress
from mcpeek.tui.rows import Columns


class SessionView:
    def __init__(self, path: Path, *, follow: bool, tab_id: str) -> None:
        self.model = SessionModel(path)
        self.tab_id = tab_id
        self.progress = Progress(_size(path))
        self.follow = follow
        self.filter: Filter | None = None
        self.matches = array("I")  # item indexes the filter lets through, ascending
        self.checked = 0  # items the filter has looked at
        self.cursor_item: int | None = None
        self.started = False
        self.done = False
        self.error: str | None = None
        self.rechecked = False
        self.held = 0  # messages its proxy holds now (--intercept; polled by the app)
        self.problems_noted = 0
        self.stick = True  # the list sticks to the newest row (its follow mode)
        self.expanded: set[int] = set()  # item indexes of opened MRTR chains
        self.columns = Columns()  # the widest cells of the rows measured (see mcpeek.tui.rows)
        # Rows that changed while a re-filter ran in a worker: looked at again
        # once its result is in (else a change in between would be lost).
        self.changed_meanwhile: set[int] | None = None

    def take_rows(self, changed: Iterable[int]) -> tuple[array[int], list[int], list[int]]:
        """The new rows that pass the filter; and the changed rows that entered and
        left it (:attr:`matches` already edited in place: the list shares it)."""
        items = self.model.items
        count = len(items)
        flt = self.filter
        if flt is None:
            new = array("I", range(self.checked, count))
        else:
            new = filter_rows(flt, items, self.checked)
        if self.changed_meanwhile is not None:
            self.changed_meanwhile.update(changed)
        entered, left = self.refilter(changed) if flt is not None else ([], [])
        self.checked = count
        return new, entered, left

    def refilter(self, changed: Iterable[int]) -> tuple[list[int], list[int]]:
        """Rows whose flow changed may enter or leave the filter: edit :attr:`matches`
        in place (a bisect and a memmove each, not a rebuild of a million rows)."""
        flt = self.filter
        entered: list[int] = []
        left: list[int] = []
        if flt is None:
            return entered, left
        matches = self.matches
        items = self.model.items
        for index in sorted(changed):
            if index >= self.checked:
                continue  # not looked at yet: take_rows filters it with the new ones
            at = bisect_left(matches, index)
            present = at < len(matches) and matches[at] == index
            if flt(items[index]) != present:
                if present:
                    matches.pop(at)
                    left.append(index)
                else:
                    matches.insert(at, index)
                    entered.append(index)
        return entered, left

    def status(self, *, following: bool, now: float | None = None, slow: float = 0.0) -> str:
        """The status line: file, counts, filter, loading state; with ``now`` (a live
        capture's clock), the requests in flight and how many are past ``slow``."""
        model = self.model
        parts = [model.name, f"{len(model.items)} flows"]
        in_flight = model.in_flight
        if now is not None and len(in_flight):
            late = in_flight.slow_count(now, slow)
            parts.append(f"{len(in_flight)} pending" + (f" ({late} slow)" if late else ""))
        if model.proxy_url is not None and not self.done:
            parts.insert(0, f"clients → {model.proxy_url}")
        if self.filter is not None:
            parts.append(f"{len(self.matches)} shown by {self.filter.text!r}")
        rechecked = " (re-checked)" if self.rechecked else ""
        parts.append(f"{len(model.findings)} violations{rechecked}")
        if self.error:
            parts.append(f"error: {self.error}")
        elif not self.done:
            fraction = self.progress.fraction
            parts.append(
                "following" if self.follow and fraction >= 1 else f"loading {fraction:.0%}"
            )
        elif model.ended:
            parts.append("server exited")
        if self.held:
            parts.append(f"{self.held} held (H)")
        if following:
            parts.append("follow")
        return "  ·  ".join(parts)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0
