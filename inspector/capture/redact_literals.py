"""The literals a regex's every match holds: a pattern runs only on text that has one.

Read from the pattern's parse tree (:mod:`re`'s own parser), so that two dozen
secret patterns cost a few substring tests, at C speed, on a message that
cannot match them (see :mod:`mcpeek.inspector.capture.redact_detect`).
"""

from __future__ import annotations

import importlib
import re
from typing import Any

# The regex parser behind ``re`` (``sre_parse`` before 3.11, now deprecated):
# it reads the literals out of the plugins' patterns. Untyped, hence Any.
_sre_parser: Any = importlib.import_module("re._parser")
_sre: Any = importlib.import_module("re._constants")


def required_literals(regex: re.Pattern[str]) -> frozenset[str]:
    """Strings of which every match of ``regex`` holds one (lower-cased for a
    case-insensitive pattern), read from the pattern's parse tree: its longest
    run of literal characters, or alternation of such runs. Empty when the
    pattern has none worth testing (then it always runs)."""
    options = _literal_options(_sre_parser.parse(regex.pattern, regex.flags).data)
    if not options:
        return frozenset()
    best = max(options, key=lambda choice: min(map(len, choice)))
    if min(map(len, best)) < 2:
        return frozenset()  # one character (":", "."): in about every message
    if regex.flags & re.IGNORECASE:
        best = {literal.lower() for literal in best}
    return frozenset(best)


def _literal_options(sequence: Any) -> list[set[str]]:
    """Each set: literals of which a match of ``sequence`` holds at least one."""
    out: list[set[str]] = []
    run: list[str] = []
    for op, arg in sequence:
        if op is _sre.LITERAL:
            run.append(chr(arg))
            continue
        if run:
            out.append({"".join(run)})
            if op is _sre.BRANCH:
                # The parser takes a common prefix out of an alternation
                # ("A3T|AKIA" is "A(?:3T|KIA)"): glued back, the literals are longer.
                leads = [_leading_literal(branch) for branch in arg[1]]
                if all(leads):
                    out.append({"".join(run) + lead for lead in leads})
            run = []
        if op is _sre.SUBPATTERN:
            out.extend(_literal_options(arg[3]))
        elif op is _sre.BRANCH:
            choices = [_literal_options(branch) for branch in arg[1]]
            if all(choices):
                out.append(set().union(*(max(c, key=lambda s: min(map(len, s))) for c in choices)))
        elif op in (_sre.MAX_REPEAT, _sre.MIN_REPEAT) and arg[0] >= 1:
            out.extend(_literal_options(arg[2]))
    if run:
        out.append({"".join(run)})
    return out


def _leading_literal(sequence: Any) -> str:
    """The literal characters ``sequence`` begins with ("" if none)."""
    lead = []
    for op, arg in sequence:
        if op is not _sre.LITERAL:
            break
        lead.append(chr(arg))
    return "".join(lead)


def alternation(literals: list[str]) -> str:
    """A regex that matches any of ``literals``, as a tree of their common
    prefixes (``A(?:C|KC|P)``): ``re`` tries one branch per first character
    where a flat alternation tried them all, at every position of the text."""
    if not literals:
        return "(?!)"  # nothing to find
    by_first: dict[str, list[str]] = {}
    for literal in literals:
        by_first.setdefault(literal[:1], []).append(literal[1:])
    branches = []
    for first, rests in sorted(by_first.items()):
        if "" in rests:  # the literal ends here: a longer one it starts is implied
            branches.append(re.escape(first))
        else:
            branches.append(re.escape(first) + alternation(rests))
    return branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
