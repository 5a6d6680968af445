"""A parsed filter compiled into Python, and run over a session's rows.

The parser (:mod:`~mcpeek.inspector.filters.parser`) gives one Python
expression over ``item`` and ``flow``; :class:`Filter` compiles it once into
two functions: ``match`` tests one item, ``rows`` loops over a list of items
collecting row numbers (a call per row would cost more than the test itself
on a million rows).
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Sequence
from itertools import islice
from typing import TYPE_CHECKING

from mcpeek.inspector.filters.base import FilterError, Namespace, Predicate
from mcpeek.inspector.filters.parser import Part, parse

if TYPE_CHECKING:
    from mcpeek.inspector.views.session import FlowItem


TEMPLATE = """\
def match(item):
    flow = item.flow
    return True if {expr} else False

def rows(items, start, end):
    out = array("I")
    append = out.append
    for index, item in enumerate(islice(items, start, end), start):
        flow = item.flow
        if {expr}:
            append(index)
    return out
"""


class Filter:
    """A compiled filter: call it on a :class:`FlowItem`; ``str()`` gives its canonical text."""

    __slots__ = ("match", "rows", "shown", "source", "text")

    def __init__(self, text: str, part: Part, ns: Namespace) -> None:
        self.text = text
        self.shown = part.shown
        self.source = TEMPLATE.format(expr=part.expr)
        scope = {**ns.values, "array": array, "islice": islice, "enumerate": enumerate}
        try:
            exec(compile(self.source, "<filter>", "exec"), scope)
        except (SyntaxError, RecursionError, MemoryError, ValueError):  # pragma: no cover
            raise FilterError("filter too complex", 1) from None
        self.match: Predicate = scope["match"]
        self.rows: Callable[[Sequence[FlowItem], int, int], array[int]] = scope["rows"]

    def __call__(self, item: FlowItem) -> bool:
        return self.match(item)

    @property
    def matches_everything(self) -> bool:
        return not self.shown

    def __str__(self) -> str:
        return self.shown or "~a"

    def __repr__(self) -> str:
        return f"Filter({self.text!r})"


def compile_filter(text: str) -> Filter:
    """Compile filter text; raises :class:`FilterError` (and nothing else) when it is wrong."""
    part, ns = parse(text)
    return Filter(text, part, ns)


def filter_rows(filter: Filter, items: Sequence[FlowItem], start: int = 0) -> array[int]:
    """The indexes (from ``start``) of the items the filter matches, as an ``array('I')``.

    ``items`` may grow meanwhile (a live session): only the rows there at the
    call are looked at.
    """
    end = len(items)
    start = max(start, 0)
    if filter.matches_everything:
        return array("I", range(start, end))
    return filter.rows(items, start, end)
