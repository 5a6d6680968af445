"""Bounds on hostile schemas: what is refused before any compiling or matching.

A tool's schemas come from the server, so their size and their regexes are
checked first, without recursion and stopping early: a schema deeper than
:data:`MAX_SCHEMA_DEPTH` levels or with more than :data:`MAX_SUBSCHEMAS`
objects and arrays is not compiled (:func:`schema_shape_problem`), and a
``pattern`` with the shape of catastrophic backtracking (:func:`risky_regex`)
is not matched, nor is any pattern against a string longer than
:data:`MAX_PATTERN_INPUT`. Validation itself is bounded by a step budget:
each keyword of :data:`APPLICATORS` costs a step (plus the size of the
instance it applies to), each reference of :data:`REFS` costs
:data:`REF_COST`, and one validation may take at most :data:`MAX_STEPS`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

MAX_SCHEMA_DEPTH = 64  # JSON nesting levels of a schema
MAX_SUBSCHEMAS = 10_000  # objects and arrays in a schema
MAX_PATTERN_INPUT = 10_000  # longest string a `pattern` is matched against
MAX_STEPS = 50_000  # subschema applications one validation may take ($ref fan-out, big arrays)
REF_COST = 32  # a reference costs many applications (it is resolved each time, and slowly)
REFS = frozenset({"$ref", "$dynamicRef", "$recursiveRef"})
#: keywords that apply subschemas: the ones a validation's cost grows with
APPLICATORS = frozenset(
    {
        "allOf",
        "anyOf",
        "oneOf",
        "not",
        "if",
        "dependentSchemas",
        "dependencies",
        "items",
        "prefixItems",
        "additionalItems",
        "contains",
        "unevaluatedItems",
        "properties",
        "patternProperties",
        "additionalProperties",
        "unevaluatedProperties",
        "propertyNames",
        "extends",
    }
)


def schema_shape_problem(schema: Any) -> str | None:
    """Why a schema is too big to compile (depth, size), or ``None``. Iterative, stops early."""
    stack: list[tuple[Any, int]] = [(schema, 1)]
    count = 0
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            children: Any = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        count += 1
        if depth > MAX_SCHEMA_DEPTH:
            return f"schema nested deeper than {MAX_SCHEMA_DEPTH} levels"
        if count > MAX_SUBSCHEMAS:
            return f"schema has more than {MAX_SUBSCHEMAS} subschemas"
        for child in children:
            if isinstance(child, (dict, list)):
                stack.append((child, depth + 1))
    return None


def risky_regex(pattern: str) -> bool:
    """A pattern with a quantified group that holds a quantifier or an alternation
    (``(a+)+``, ``(a|aa)*``): the shape of catastrophic backtracking."""
    stack = [False]
    i, n = 0, len(pattern)
    in_class = False
    while i < n:
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
        elif c == "(":
            stack.append(False)
        elif c == ")":
            inner = stack.pop() if len(stack) > 1 else False
            nxt = pattern[i + 1] if i + 1 < n else ""
            if nxt in ("+", "*", "{"):
                if inner:
                    return True
                stack[-1] = True
            elif inner:
                stack[-1] = True
        elif c in "+*|{":
            stack[-1] = True
        i += 1
    return False


def pattern_property_keys(schema: Any) -> Iterator[str]:
    """The regexes of every ``patternProperties`` in a schema, at any depth."""
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            pp = node.get("patternProperties")
            if isinstance(pp, dict):
                yield from (k for k in pp if isinstance(k, str))
            stack.extend(v for v in node.values() if isinstance(v, (dict, list)))
        elif isinstance(node, list):
            stack.extend(v for v in node if isinstance(v, (dict, list)))
