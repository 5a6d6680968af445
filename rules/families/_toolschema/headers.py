"""``x-mcp-header`` annotations: the tool parameters a client mirrors into HTTP headers.

A property of a tool's ``inputSchema`` may carry ``x-mcp-header: Name``; over
HTTP the client then sends that argument as the ``Mcp-Param-Name`` header.
:func:`header_annotations` walks the schema (iteratively, and only a schema
within the :mod:`.bounds`) and lists every annotation with what is wrong
with it: a value that is no HTTP field-name token, a name used twice
(case-insensitively), an annotation not reachable through ``properties``
alone, or one on a parameter that is not a single integer, string or
boolean. A tool with such an annotation is one clients must exclude.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec

from mcpeek.rules.families._toolschema.bounds import schema_shape_problem

_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
PRIMITIVES = frozenset({"string", "integer", "boolean"})
SAFE_INTEGER = 2**53 - 1

# Keywords whose value is a map of name → subschema, a subschema, or a list of subschemas.
_SCHEMA_MAPS = frozenset(
    {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
)
_SCHEMA_ONE = frozenset(
    {
        "items",
        "additionalItems",
        "additionalProperties",
        "unevaluatedItems",
        "unevaluatedProperties",
        "contains",
        "propertyNames",
        "not",
        "if",
        "then",
        "else",
        "contentSchema",
    }
)
_SCHEMA_LISTS = frozenset({"allOf", "anyOf", "oneOf", "prefixItems", "items"})


class HeaderAnnotation(msgspec.Struct, frozen=True):
    """An ``x-mcp-header`` found in an ``inputSchema``."""

    name: Any  # the annotation's value (the part after ``Mcp-Param-``)
    where: str  # e.g. ``inputSchema.properties.region``
    chain: tuple[str, ...] | None  # the property path, when statically reachable
    problems: tuple[str, ...] = ()


def header_annotations(schema: Any) -> list[HeaderAnnotation] | None:
    """Every ``x-mcp-header`` of an ``inputSchema`` with its problems; ``None`` if too big."""
    if not isinstance(schema, dict) or schema_shape_problem(schema) is not None:
        return None
    found: list[HeaderAnnotation] = []
    # (schema node, where, property chain or None when not statically reachable)
    stack: list[tuple[Any, str, tuple[str, ...] | None]] = [(schema, "inputSchema", ())]
    while stack:
        node, where, chain = stack.pop()
        if not isinstance(node, dict):
            continue
        if "x-mcp-header" in node:
            problems = _annotation_problems(node, chain)
            found.append(HeaderAnnotation(node["x-mcp-header"], where, chain, tuple(problems)))
        for key, value in node.items():
            if key in _SCHEMA_MAPS and isinstance(value, dict):
                for name, sub in value.items():
                    static = (*chain, name) if key == "properties" and chain is not None else None
                    stack.append((sub, f"{where}.{key}.{name}", static))
            elif key in _SCHEMA_LISTS and isinstance(value, list):
                for i, sub in enumerate(value):
                    stack.append((sub, f"{where}.{key}[{i}]", None))
            elif key in _SCHEMA_ONE and isinstance(value, dict):
                stack.append((value, f"{where}.{key}", None))
    names: dict[str, int] = {}
    for ann in found:
        if isinstance(ann.name, str):
            names[ann.name.lower()] = names.get(ann.name.lower(), 0) + 1
    out = []
    for ann in sorted(found, key=lambda a: a.where):
        issues = ann.problems
        if isinstance(ann.name, str) and names.get(ann.name.lower(), 0) > 1:
            issues = (*issues, "is not unique (case-insensitive)")
        out.append(HeaderAnnotation(ann.name, ann.where, ann.chain, issues))
    return out


def _annotation_problems(node: dict[str, Any], chain: tuple[str, ...] | None) -> list[str]:
    value = node["x-mcp-header"]
    problems: list[str] = []
    if not isinstance(value, str):
        problems.append("is not a string")
    elif not value:
        problems.append("is empty")
    elif _CONTROL.search(value):
        problems.append("contains a control character")
    elif not _TOKEN.fullmatch(value):
        problems.append("is not an HTTP field-name token")
    if not chain:
        problems.append("is not on a property reachable through `properties` alone")
    kind = _primitive_kind(node)
    if kind == "number":
        problems.append("is on a `number` parameter (only integer, string, boolean)")
    elif kind is None:
        problems.append("is on a parameter that is not integer, string or boolean")
    return problems


def _primitive_kind(node: dict[str, Any]) -> str | None:
    """``string``/``integer``/``boolean`` when the schema is one of those, ``number`` when
    it is a number, ``None`` otherwise."""
    types = node.get("type")
    if isinstance(types, str):
        types = [types]
    if isinstance(types, list):
        kinds = {t for t in types if t != "null"}
        if "number" in kinds:
            return "number"
        if len(kinds) == 1 and kinds <= PRIMITIVES:
            return str(next(iter(kinds)))
        return None
    values = node.get("enum") if "enum" in node else [node["const"]] if "const" in node else None
    if isinstance(values, list) and values:
        kinds = {_value_kind(v) for v in values}
        if len(kinds) == 1 and kinds <= PRIMITIVES:
            return str(next(iter(kinds)))
    return None


def _value_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, str):
        return "string"
    return "other"
