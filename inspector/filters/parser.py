"""From filter text to a Python expression: scanning, parsing, combining.

A hand-written recursive-descent parser over the characters (no token list:
what a word is depends on where it is, e.g. ``|`` ends a bare word but is part
of ``~s error|complete``'s argument). Grammar, loosest first::

    filter  := or?                       (empty text matches everything)
    or      := and ('|' and)*
    and     := unary (['&'] unary)*      (juxtaposition means &)
    unary   := '!'* atom
    atom    := '(' or ')' | '~' CODE [ARG] | WORD

An ARG runs to the next whitespace or to a ``)`` that closes no ``(`` of the
argument itself (so ``~m tools/(call|list)`` works); a WORD also stops at
``(``, ``)``, ``&`` and ``|``. Either can be quoted with ``"`` or ``'``: inside
quotes, ``\\"`` (or ``\\'``) and ``\\\\`` stand for the quote and the
backslash, any other backslash stays (so regex escapes pass unchanged).

Each node becomes a Python expression (see :mod:`mcpeek.inspector.filters.base`);
``&``/``|`` chains are flat ``and``/``or``, ``!`` is ``not``, and the whole
filter is compiled once into two functions (:mod:`~mcpeek.inspector.filters.compiled`):
one that tests an item, one that loops over a list of items collecting row
numbers. Errors are
:class:`~mcpeek.inspector.filters.base.FilterError` with the 1-based column; no
other exception escapes :func:`compile_filter`, whatever the text.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from mcpeek.inspector.filters import operators as _operators  # noqa: F401  (registers the operators)
from mcpeek.inspector.filters.base import (
    OPERATORS,
    BadArgument,
    FilterError,
    Memo,
    Namespace,
    Operator,
    quote,
)

if TYPE_CHECKING:
    pass

MAX_DEPTH = 32  # nested parentheses
OR, AND, UNARY = 0, 1, 2  # binding strength, for printing


class Part(NamedTuple):
    expr: str  # Python source over ``item`` and ``flow``
    shown: str  # canonical filter text
    level: int  # OR, AND or UNARY


def _known() -> str:
    return " ".join(f"~{code}" for code in sorted(OPERATORS))


def _combine(parts: list[Part], joiner: str, level: int) -> Part:
    if len(parts) == 1:
        return parts[0]
    expr = "(" + f" {joiner} ".join(p.expr for p in parts) + ")"
    sign = " & " if level == AND else " | "
    shown = sign.join(p.shown if p.level >= level else f"({p.shown})" for p in parts)
    return Part(expr, shown, level)


def _negate(part: Part) -> Part:
    shown = part.shown if part.level >= UNARY else f"({part.shown})"
    return Part(f"(not {part.expr})", "!" + shown, UNARY)


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.depth = 0
        self.ns = Namespace()

    def error(self, reason: str, pos: int | None = None, more: str = "") -> FilterError:
        return FilterError(reason, (self.pos if pos is None else pos) + 1, more)

    def skip(self) -> str:
        """Skip whitespace; the next character ('' at the end)."""
        text, pos = self.text, self.pos
        while pos < len(text) and text[pos].isspace():
            pos += 1
        self.pos = pos
        return text[pos] if pos < len(text) else ""

    def parse(self) -> Part:
        if not self.skip():
            return Part("True", "", UNARY)
        part = self.or_("")
        if self.skip():  # only a stray ) stops an expression early
            raise self.error("unexpected ) (no ( to close)")
        return part

    def or_(self, after: str) -> Part:
        parts = [self.and_(after)]
        while self.skip() == "|":
            self.pos += 1
            parts.append(self.and_("after |"))
        return _combine(parts, "or", OR)

    def and_(self, after: str) -> Part:
        parts = [self.unary(after)]
        while True:
            ch = self.skip()
            if ch in ("", "|", ")"):
                break
            if ch == "&":
                self.pos += 1
                parts.append(self.unary("after &"))
            else:
                parts.append(self.unary(""))
        return _combine(parts, "and", AND)

    def unary(self, after: str) -> Part:
        nots = 0
        while self.skip() == "!":
            self.pos += 1
            nots += 1
            after = "after !"
        part = self.atom(after)
        return _negate(part) if nots % 2 else part

    def atom(self, after: str) -> Part:
        ch = self.skip()
        if ch in ("", ")", "|", "&"):
            found = f", found {ch}" if ch else ""
            where = f" {after}" if after else ""
            raise self.error(f"expected a filter{where}{found}")
        if ch == "(":
            return self.group()
        if ch == "~":
            return self.operator()
        start = self.pos
        word = self.quoted() if ch in "\"'" else self.unquoted(argument=False)
        if not word:
            raise self.error("empty word: use ~a for every flow", start)
        needle = word.lower()
        memo = self.ns.add(Memo(lambda value: needle in value.lower()))
        return Part(f"({memo}[flow.method] or {memo}[flow.name])", quote(word), UNARY)

    def group(self) -> Part:
        opened = self.pos
        if self.depth >= MAX_DEPTH:
            raise self.error(f"parentheses nested deeper than {MAX_DEPTH}")
        self.pos += 1
        self.depth += 1
        part = self.or_("after (")
        self.depth -= 1
        if self.skip() != ")":
            raise self.error("missing )", None, f" (to close the ( at column {opened + 1})")
        self.pos += 1
        return part

    def operator(self) -> Part:
        text, start = self.text, self.pos
        end = start + 1
        while end < len(text) and text[end].isascii() and text[end].isalpha():
            end += 1
        code = text[start + 1 : end].lower()
        self.pos = end
        if not code:
            raise self.error("~ without an operator", start, f"; known: {_known()}")
        cls = OPERATORS.get(code)
        if cls is None:
            raise self.error(f"unknown operator ~{code}", start, f"; known: {_known()}")
        arg, arg_pos = self.argument(cls)
        try:
            op: Operator = cls(arg)
        except BadArgument as exc:
            raise self.error(exc.reason, start if arg_pos is None else arg_pos, exc.more) from None
        return Part(op.expression(self.ns), str(op), UNARY)

    def argument(self, cls: type[Operator]) -> tuple[str | None, int | None]:
        """The operator's argument and where it starts (``None`` when it has none)."""
        if not cls.arg:
            return None, None
        before = self.pos
        ch = self.skip()
        at = self.pos
        if cls.wants_argument():
            if ch in ("", ")", "&", "|", "~"):
                raise self.error(f"~{cls.code} wants {cls.arg}", None, f" (e.g. {cls.example})")
            return (self.quoted() if ch in "\"'" else self.unquoted(argument=True)), at
        # optional: taken only when it is one of the words it knows
        if ch and ch not in "()&|~!":
            word = self.quoted() if ch in "\"'" else self.unquoted(argument=True)
            if word.lower() in cls.choices:
                return word, at
        self.pos = before
        return None, None

    def unquoted(self, *, argument: bool) -> str:
        text, start = self.text, self.pos
        end, depth = start, 0
        while end < len(text):
            ch = text[end]
            if ch.isspace():
                break
            if ch == "(":
                if not argument:
                    break
                depth += 1
            elif ch == ")":
                if depth == 0:
                    break
                depth -= 1
            elif ch in "&|" and not argument:
                break
            end += 1
        self.pos = end
        return text[start:end]

    def quoted(self) -> str:
        text, start = self.text, self.pos
        mark = text[start]
        out: list[str] = []
        pos = start + 1
        while pos < len(text):
            ch = text[pos]
            if ch == "\\" and pos + 1 < len(text) and text[pos + 1] in (mark, "\\"):
                out.append(text[pos + 1])
                pos += 2
            elif ch == mark:
                self.pos = pos + 1
                return "".join(out)
            else:
                out.append(ch)
                pos += 1
        raise self.error(f"unclosed quote {mark}", start)


def parse(text: str) -> tuple[Part, Namespace]:
    """Parse filter text into its expression and the values the expression names;
    raises :class:`FilterError` (and nothing else) when it is wrong."""
    parser = _Parser(text)
    return parser.parse(), parser.ns
