"""What the help screen shows about filters, generated from the operator registry."""

from __future__ import annotations

from mcpeek.inspector.filters import operators as _operators  # noqa: F401  (registers the operators)
from mcpeek.inspector.filters.base import OPERATORS

FILTER_SYNTAX = """\
Combine operators with ! (not), & (and) and | (or); ! binds tightest, then &,
then |, and parentheses group: ~m tools/call & !(~s ok | ~t <5ms). Writing two
filters side by side means &: "~m tools/call ~v" is "~m tools/call & ~v".

A word without ~ is a quick search: it matches flows whose method or
tool/prompt/resource name contains it, ignoring case (plain text, not a regex):
"weather" finds tools/call get_weather.

REGEX arguments are searched anywhere in the text and ignore case; anchor them
with ^ and $. An argument ends at a space (or at a ) it did not open); quote it
with "..." or '...' to include spaces, parentheses, & or |. Inside quotes, \\"
and \\\\ stand for " and \\; other backslashes are kept, so regex escapes work.
An empty filter shows every flow.
"""


def filter_help() -> list[tuple[str, str, str, str]]:
    """One row per operator: (code, argument, description, example)."""
    return [(f"~{cls.code}", cls.arg, cls.help, cls.example) for cls in OPERATORS.values()]
