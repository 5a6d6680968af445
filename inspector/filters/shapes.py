"""The shapes several ``~x`` operators share; none is an operator itself (no ``code``).

- :class:`RegexOperator`: the argument is a REGEX (searched, any case);
- :class:`FieldRegex`: that REGEX over one string field, memoised per value;
- :class:`FieldChoice`: a field equals one of a few fixed words (any case), or
  any of several written ``WORD|WORD`` where the operator takes that (``~s``, ``~k``);
- :class:`Flag`: no argument, a fixed test of the item.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from mcpeek.inspector.filters.base import BadArgument, Memo, Namespace, Operator, compile_regex


class RegexOperator(Operator):
    """An operator whose argument is a REGEX."""

    arg = "REGEX"

    def setup(self, arg: str | None) -> None:
        self.regex = compile_regex(arg or "", self.code)


class FieldRegex(RegexOperator):
    """A REGEX over one string field of the item (memoised per distinct value)."""

    field: ClassVar[str]  # an expression, e.g. "flow.method"

    def expression(self, ns: Namespace) -> str:
        search = self.regex.search
        return f"{ns.add(Memo(lambda value: search(value) is not None))}[{self.field}]"


class FieldChoice(Operator):
    """A field of the flow equals one of a few fixed words (case ignored); with
    ``alternatives``, any of several written ``WORD|WORD``."""

    field: ClassVar[str] = ""
    choices: ClassVar[tuple[str, ...]] = ()
    #: Other names of some choices (``~s ok`` is ``~s complete``).
    aliases: ClassVar[Mapping[str, str]] = {}
    alternatives: ClassVar[bool] = False

    def setup(self, arg: str | None) -> None:
        text = arg or ""
        words: set[str] = set()
        for part in text.split("|") if self.alternatives else (text,):
            word = self.aliases.get(part.lower(), part.lower())
            if word not in self.choices:
                raise self.unknown(part)
            words.add(word)
        self.words = frozenset(words)

    def unknown(self, part: str) -> BadArgument:
        """The refusal of ``part``, a word that is none of the choices."""
        wanted = " or ".join(self.choices)
        return BadArgument(f"~{self.code} wants {wanted}", f"; got {part!r}")

    def expression(self, ns: Namespace) -> str:
        if len(self.words) == 1:
            (word,) = self.words
            return f"{self.field} == {ns.add(word)}"
        return f"{self.field} in {ns.add(self.words)}"


class Flag(Operator):
    """An operator without argument: a fixed test of the item."""

    test: ClassVar[str] = "True"  # an expression over ``item`` and ``flow``

    def expression(self, ns: Namespace) -> str:
        return self.test
