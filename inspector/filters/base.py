"""The building blocks of flow filters: predicates, the operator registry, errors.

A compiled filter is one generated Python function: each operator
contributes an *expression* over the local names ``item`` (the
:class:`~mcpeek.inspector.views.session.FlowItem`) and ``flow`` (``item.flow``), and
the parser joins them with ``and``/``or``/``not``. So ``~m tools/call & ~v``
runs as ``_k0[flow.method] and item.worst is not None``: no call per
operator per row, which is what makes a million rows take well under a
second. Everything that can be worked out in advance (regular expressions,
status sets, latency limits) is, and lives in the filter's
:class:`Namespace`; operators that need a loop (``~b``, ``~r``, ``~id``)
contribute a call to a closure.

Each ``~x`` operator is a small subclass of :class:`Operator` that names its
``code``; defining the class registers it (``__init_subclass__``) in
:data:`OPERATORS`, which the parser looks codes up in and the help screen is
generated from. An operator instance is one use of it in a filter, with its
argument already checked.

Text tests on fields that take few distinct values (method, name, comment,
rule id) are memoised per filter (:class:`Memo`): the regex runs once per
distinct string, and every other row costs one dictionary look-up.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from mcpeek.inspector.views.session import FlowItem

Predicate = Callable[["FlowItem"], bool]

#: code -> operator class, in definition order (the order of the help screen).
OPERATORS: dict[str, type[Operator]] = {}

MEMO_LIMIT = 65_536  # distinct strings remembered per text test before starting afresh
REGEX_SPECIALS = frozenset(".^$*+?{}[]\\|()")


class FilterError(ValueError):
    """A filter that does not compile; ``column`` (1-based) says where.

    The message reads ``{reason} at column {column}{more}``, e.g. ``unknown
    operator ~x at column 5; known: ~a ~b …``.
    """

    def __init__(self, reason: str, column: int, more: str = "") -> None:
        super().__init__(f"{reason} at column {column}{more}")
        self.reason = reason
        self.column = column
        self.more = more


class BadArgument(Exception):
    """An operator refuses its argument (the parser adds the column before ``more``)."""

    def __init__(self, reason: str, more: str = "") -> None:
        super().__init__(reason)
        self.reason = reason
        self.more = more


class Operator:
    """One ``~code`` of the filter language; subclasses register themselves.

    ``arg`` is how the help shows the argument: empty for none, in brackets
    for an optional one (then ``choices`` lists the words it takes).
    """

    code: ClassVar[str]
    arg: ClassVar[str] = ""
    choices: ClassVar[tuple[str, ...]] = ()
    help: ClassVar[str] = ""
    example: ClassVar[str] = ""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "code" in cls.__dict__:  # a concrete operator, not a shared base
            if cls.code in OPERATORS:
                raise TypeError(f"filter operator ~{cls.code} is defined twice")
            OPERATORS[cls.code] = cls

    def __init__(self, arg: str | None = None) -> None:
        self.arg_text = arg
        self.setup(arg)

    @classmethod
    def wants_argument(cls) -> bool:
        return bool(cls.arg) and not cls.arg.startswith("[")

    def setup(self, arg: str | None) -> None:
        """Check and prepare the argument; raise :class:`BadArgument` if it will not do."""

    def expression(self, ns: Namespace) -> str:
        """A Python expression over ``item`` and ``flow``, true when the row matches."""
        raise NotImplementedError

    def __str__(self) -> str:
        if self.arg_text is None:
            return f"~{self.code}"
        return f"~{self.code} {quote(self.arg_text, argument=True)}"


def compile_regex(pattern: str, code: str) -> re.Pattern[str]:
    """A case-insensitive regex, or :class:`BadArgument` saying what is wrong with it."""
    try:
        with warnings.catch_warnings():  # e.g. "possible nested set": not the user's concern
            warnings.simplefilter("ignore")
            return re.compile(pattern, re.IGNORECASE)
    except re.error as exc:
        raise BadArgument(f"bad regex {pattern!r} for ~{code}", f": {exc.msg}") from None
    except (OverflowError, RecursionError, ValueError) as exc:
        raise BadArgument(f"bad regex {pattern!r} for ~{code}", f": {exc}") from None


def is_plain(pattern: str) -> bool:
    """True when the pattern has no regex syntax: it only matches itself."""
    return not REGEX_SPECIALS.intersection(pattern)


class Memo(dict[object, bool]):
    """``memo[value]``: does ``test`` hold for the string ``value``? Run once per value.

    ``None`` (no such field) and anything not a string never match. A miss
    costs a call; a hit is a plain dictionary look-up, inline in the
    generated code.
    """

    __slots__ = ("test",)

    def __init__(self, test: Callable[[str], bool]) -> None:
        super().__init__()
        self.test = test
        self[None] = False

    def __missing__(self, value: object) -> bool:
        if len(self) > MEMO_LIMIT:
            self.clear()
            self[None] = False
        hit = self[value] = isinstance(value, str) and self.test(value)
        return hit


class Namespace:
    """The globals of one filter's generated code: every value it uses, by name.

    What the user typed only ever reaches the code as a value here (a regex, a
    set, a number), never as source text.
    """

    def __init__(self) -> None:
        self.values: dict[str, Any] = {}

    def add(self, value: object) -> str:
        name = f"_k{len(self.values)}"
        self.values[name] = value
        return name


def quote(text: str, *, argument: bool = False) -> str:
    """``text`` as the parser would read it back (quoted only when it must be)."""
    plain = (
        text
        and not any(ch.isspace() for ch in text)
        and text[0] not in "~&|!\"'"
        and "(" not in text
        and ")" not in text
        and (argument or ("&" not in text and "|" not in text))
    )
    if plain:
        return text
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
