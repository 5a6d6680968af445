"""The shapes several ``~x`` operators share; none is an operator itself (no ``code``).

- :class:`RegexOperator`: the argument is a REGEX (searched, any case);
- :class:`FieldRegex`: that REGEX over one string field, memoised per value;
- :class:`FieldChoice`: a field equals one of a few fixed words (any case);
- :class:`Flag`: no argument, a fixed test of the item.
"""

from __future__ import annotations

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
    """A field of the flow equals one of a few fixed words (case ignored)."""

    field: ClassVar[str] = ""
    choices: ClassVar[tuple[str, ...]] = ()

    def setup(self, arg: str | None) -> None:
        self.word = (arg or "").lower()
        if self.word not in self.choices:
            wanted = " or ".join(self.choices)
            raise BadArgument(f"~{self.code} wants {wanted}", f"; got {arg!r}")

    def expression(self, ns: Namespace) -> str:
        return f"{self.field} == {ns.add(self.word)}"


class Flag(Operator):
    """An operator without argument: a fixed test of the item."""

    test: ClassVar[str] = "True"  # an expression over ``item`` and ``flow``

    def expression(self, ns: Namespace) -> str:
        return self.test
