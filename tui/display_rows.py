"""The flow list's display rows: which line shows which flow (or round of a chain).

A display row is a code in an ``array("Q")``, ascending: the item index of a
flow shifted left by ``SUB_BITS``, plus, for a sub-row of an expanded MRTR
chain, the number of its attempt (1, 2, ...). Ascending codes keep every edit
a bisect and a memmove, so a million rows are never rebuilt for a few that
changed. Pure functions over arrays: the widget (:mod:`mcpeek.tui.flow_list`)
holds the arrays and the cursor.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Callable, Iterable

SUB_BITS = 8  # up to 255 attempts of one chain shown as sub-rows
SUB_MASK = (1 << SUB_BITS) - 1


def rows_of(index: int, attempts: int, expanded: bool) -> list[int]:
    """The display rows of one item: its own, then its rounds if it is an expanded
    chain of ``attempts`` attempts."""
    codes = [index << SUB_BITS]
    if expanded and attempts > 1:
        codes += [(index << SUB_BITS) | (k + 1) for k in range(min(attempts, SUB_MASK))]
    return codes


def build(
    matches: array[int], expanded: Iterable[int], rows: Callable[[int], list[int]]
) -> array[int]:
    """The display rows of ``matches`` (item indexes, ascending), the ``expanded``
    ones with their sub-rows (``rows(index)``)."""
    out = array("Q", (i << SUB_BITS for i in matches))
    for item_index in sorted(expanded, reverse=True):  # from the end: earlier offsets hold
        at = bisect_left(matches, item_index)
        if at < len(matches) and matches[at] == item_index:
            out[at : at + 1] = array("Q", rows(item_index))
    return out


def patch(
    rows: array[int],
    entered: Iterable[int],
    left: Iterable[int],
    rows_of_item: Callable[[int], list[int]],
) -> None:
    """Edit ``rows`` in place: the items that ``left`` go (with their sub-rows), those
    that ``entered`` come in at their place."""
    for index in left:
        start = bisect_left(rows, index << SUB_BITS)
        end = bisect_left(rows, (index + 1) << SUB_BITS)
        del rows[start:end]
    for index in entered:
        at = bisect_left(rows, index << SUB_BITS)
        rows[at:at] = array("Q", rows_of_item(index))


def row_of_item(rows: array[int], item_index: int) -> int:
    """The row of item ``item_index`` (or of the next item shown, if it is not)."""
    at = bisect_left(rows, item_index << SUB_BITS)
    return min(at, max(len(rows) - 1, 0))
