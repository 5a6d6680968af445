"""A JSON reader that keeps where every value sits in the text, with JSONC as an option.

``json.loads`` gives values but forgets the text; rewriting a client's
config with ``json.dumps`` would lose its comments, its formatting and, for
JSONC, its very syntax. This reader returns a tree of nodes that each know
their ``start``/``end`` offsets, so a caller can replace exactly one value.
With ``jsonc=True`` it also accepts ``//`` and ``/* */`` comments and
trailing commas, as VS Code's parser does. Strings are decoded by the
standard library's own scanner, so escapes mean what they mean to ``json``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from json.decoder import scanstring  # type: ignore[attr-defined]

NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?")
LITERALS = {"true": True, "false": False, "null": None}
WHITESPACE = " \t\n\r\ufeff"  # a byte-order mark at the start is whitespace to VS Code too
#: Deeper than any config: past it the text is refused, not a RecursionError.
MAX_DEPTH = 200


class JsoncError(ValueError):
    """The text is not JSON (or JSONC); ``str()`` is ``LINE:COLUMN: reason``."""

    def __init__(self, reason: str, text: str, offset: int) -> None:
        self.line = text.count("\n", 0, offset) + 1
        self.column = offset - (text.rfind("\n", 0, offset) + 1) + 1
        self.reason = reason
        super().__init__(f"{self.line}:{self.column}: {reason}")


@dataclass(frozen=True)
class Scalar:
    """A string, number, true, false or null; ``value`` as ``json`` decodes it."""

    value: object
    start: int
    end: int


@dataclass(frozen=True)
class Member:
    """``"key": value`` in an object. ``lead`` is where the text before the key
    begins (just after the ``{`` or ``,``): ``text[lead:key_start]`` is its indentation."""

    key: str
    lead: int
    key_start: int
    value: Node


@dataclass(frozen=True)
class Object:
    members: tuple[Member, ...]
    start: int
    end: int

    def get(self, key: str) -> Member | None:
        """The member named ``key`` (the last one, as JSON.parse keeps the last)."""
        found = None
        for member in self.members:
            if member.key == key:
                found = member
        return found


@dataclass(frozen=True)
class Array:
    """``items`` and, for each item that has one, the offset of the comma after it."""

    items: tuple[Node, ...]
    commas: tuple[int, ...]
    start: int
    end: int


Node = Scalar | Object | Array


def parse(text: str, *, jsonc: bool = False) -> Node:
    """The tree of ``text``; :class:`JsoncError` names the first place it is not JSON."""
    reader = _Reader(text, jsonc)
    node = reader.value(0)
    reader.skip()
    if reader.pos < len(text):
        raise JsoncError("unexpected text after the end of the JSON value", text, reader.pos)
    return node


def string_value(node: Node | None) -> str | None:
    """The node's text when it is a string, else None."""
    if isinstance(node, Scalar) and isinstance(node.value, str):
        return node.value
    return None


class _Reader:
    def __init__(self, text: str, jsonc: bool) -> None:
        self.text = text
        self.jsonc = jsonc
        self.pos = 0

    def fail(self, reason: str, offset: int | None = None) -> JsoncError:
        return JsoncError(reason, self.text, self.pos if offset is None else offset)

    def skip(self) -> None:
        """Past whitespace and, in JSONC, comments."""
        text = self.text
        while self.pos < len(text):
            char = text[self.pos]
            if char in WHITESPACE:
                self.pos += 1
            elif char == "/" and text.startswith(("//", "/*"), self.pos):
                if not self.jsonc:
                    raise self.fail("a comment, which this client's JSON does not allow")
                if text.startswith("//", self.pos):
                    newline = text.find("\n", self.pos)
                    self.pos = len(text) if newline < 0 else newline
                else:
                    close = text.find("*/", self.pos + 2)
                    if close < 0:
                        raise self.fail("a /* comment that is never closed")
                    self.pos = close + 2
            else:
                return

    def value(self, depth: int) -> Node:
        if depth > MAX_DEPTH:
            raise self.fail("values nested too deep")
        self.skip()
        text, start = self.text, self.pos
        if start >= len(text):
            raise self.fail("the text ends where a value should be")
        char = text[start]
        if char == "{":
            return self.object(depth)
        if char == "[":
            return self.array(depth)
        if char == '"':
            return Scalar(self.string(), start, self.pos)
        number = NUMBER.match(text, start)
        if number:
            self.pos = number.end()
            return Scalar(json.loads(number.group()), start, self.pos)
        for word, literal in LITERALS.items():
            if text.startswith(word, start):
                self.pos = start + len(word)
                return Scalar(literal, start, self.pos)
        raise self.fail(f"unexpected character {char!r}")

    def string(self) -> str:
        try:
            decoded, self.pos = scanstring(self.text, self.pos + 1, True)
        except json.JSONDecodeError as exc:
            raise self.fail(exc.msg.lower(), exc.pos) from None
        return str(decoded)

    def separator(self, close: str, what: str) -> bool:
        """After an item: True at a comma (consumed), False at ``close`` (not consumed)."""
        self.skip()
        if self.text.startswith(",", self.pos):
            return True
        if self.text.startswith(close, self.pos):
            return False
        if self.pos >= len(self.text):
            raise self.fail(f"the text ends before the closing {close!r}")
        raise self.fail(f"expected ',' or {close!r} after {what}")

    def closes(self, close: str, after_comma: bool) -> bool:
        """At ``close`` (consumed): the container ends; a trailing comma only in JSONC."""
        self.skip()
        if not self.text.startswith(close, self.pos):
            return False
        if after_comma and not self.jsonc:
            raise self.fail("a trailing comma, which this client's JSON does not allow")
        self.pos += 1
        return True

    def object(self, depth: int) -> Object:
        start = self.pos
        self.pos += 1
        members: list[Member] = []
        lead = self.pos
        while not self.closes("}", bool(members)):
            self.skip()
            key_start = self.pos
            if not self.text.startswith('"', key_start):
                raise self.fail('expected a "quoted" key')
            key = self.string()
            self.skip()
            if not self.text.startswith(":", self.pos):
                raise self.fail("expected ':' after the key")
            self.pos += 1
            members.append(Member(key, lead, key_start, self.value(depth + 1)))
            if not self.separator("}", "a member"):
                self.pos += 1
                break
            self.pos += 1
            lead = self.pos
        return Object(tuple(members), start, self.pos)

    def array(self, depth: int) -> Array:
        start = self.pos
        self.pos += 1
        items: list[Node] = []
        commas: list[int] = []
        while not self.closes("]", bool(items)):
            items.append(self.value(depth + 1))
            if not self.separator("]", "an item"):
                self.pos += 1
                break
            commas.append(self.pos)
            self.pos += 1
        return Array(tuple(items), tuple(commas), start, self.pos)
