"""Flow filters: the small query language of the viewer (issue #6).

In the style of mitmproxy's flow filters: ``~m tools/call & ~v error``,
``~s error|unanswered | ~t >1s``, ``!~d s2c``, or a bare word as a quick
search over methods and names. :func:`compile_filter` turns the text into a
:class:`Filter` (a predicate on a :class:`~mcpeek.inspector.views.session.FlowItem`)
or raises :class:`FilterError` with the column of the problem;
:func:`filter_rows` runs one over a whole session, fast enough for a million
rows. :func:`filter_help` and :data:`FILTER_SYNTAX` are the help screen.

Modules: :mod:`~mcpeek.inspector.filters.base` (predicates, registry, errors),
:mod:`~mcpeek.inspector.filters.shapes` and
:mod:`~mcpeek.inspector.filters.operators` (the ``~x`` operators),
:mod:`~mcpeek.inspector.filters.parser` (the grammar),
:mod:`~mcpeek.inspector.filters.compiled` (the compiled filter), and
:mod:`~mcpeek.inspector.filters.helptext`. Headless: no UI toolkit is imported.
"""

from mcpeek.inspector.filters.base import OPERATORS, FilterError, Operator
from mcpeek.inspector.filters.compiled import Filter, compile_filter, filter_rows
from mcpeek.inspector.filters.helptext import FILTER_SYNTAX, filter_help

__all__ = [
    "FILTER_SYNTAX",
    "OPERATORS",
    "Filter",
    "FilterError",
    "Operator",
    "compile_filter",
    "filter_help",
    "filter_rows",
]
