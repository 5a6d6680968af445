"""Elicitation: the form schemas a server may request (PrimitiveSchemaDefinition) and the
client's answer; the same in 2026-07-28 and 2025-11-25.

``PrimitiveSchemaDefinition`` is an untagged ``anyOf`` (four members have
``type: string``): each form field is tried against the members, likeliest first.
"""

from __future__ import annotations

from typing import Any, Literal

from mcpeek.rules.models._base import UNSET, Model, Unset, any_of, named


class _Field(Model):
    title: str | Unset = UNSET
    description: str | Unset = UNSET


class StringSchema(_Field):
    type: Literal["string"]
    minLength: int | Unset = UNSET
    maxLength: int | Unset = UNSET
    format: Literal["date", "date-time", "email", "uri"] | Unset = UNSET
    default: str | Unset = UNSET


class NumberSchema(_Field):
    type: Literal["integer", "number"]
    minimum: float | Unset = UNSET
    maximum: float | Unset = UNSET
    default: float | Unset = UNSET


class BooleanSchema(_Field):
    type: Literal["boolean"]
    default: bool | Unset = UNSET


class UntitledSingleSelectEnumSchema(_Field):
    type: Literal["string"]
    enum: list[str]
    default: str | Unset = UNSET


class EnumOption(Model):
    const: str
    title: str


class TitledSingleSelectEnumSchema(_Field):
    type: Literal["string"]
    oneOf: list[EnumOption]
    default: str | Unset = UNSET


class LegacyTitledEnumSchema(UntitledSingleSelectEnumSchema):
    enumNames: list[str] | Unset = UNSET


class UntitledItems(Model):
    type: Literal["string"]
    enum: list[str]


class TitledItems(Model):
    anyOf: list[EnumOption]


class _MultiSelect(_Field):
    type: Literal["array"]
    minItems: int | Unset = UNSET
    maxItems: int | Unset = UNSET
    default: list[str] | Unset = UNSET


class UntitledMultiSelectEnumSchema(_MultiSelect):
    items: UntitledItems


class TitledMultiSelectEnumSchema(_MultiSelect):
    items: TitledItems


_BY_TYPE: dict[Any, tuple[type[Model], ...]] = {
    "string": (
        StringSchema,
        UntitledSingleSelectEnumSchema,
        TitledSingleSelectEnumSchema,
        LegacyTitledEnumSchema,
    ),
    "number": (NumberSchema,),
    "integer": (NumberSchema,),
    "boolean": (BooleanSchema,),
    "array": (UntitledMultiSelectEnumSchema, TitledMultiSelectEnumSchema),
}


_ALL_FIELDS = tuple(dict.fromkeys(t for types in _BY_TYPE.values() for t in types))


def _primitive_order(value: Any) -> tuple[type[Model], ...]:
    """The PrimitiveSchemaDefinition members to try, the likeliest first."""
    kind = value.get("type") if isinstance(value, dict) else None
    if not isinstance(kind, str) or kind not in _BY_TYPE:
        return _ALL_FIELDS
    found = _BY_TYPE[kind]
    if kind == "string" and isinstance(value, dict):
        hint = next((k for k in ("oneOf", "enumNames", "enum") if k in value), None)
        key = {"oneOf": 2, "enumNames": 3, "enum": 1}.get(hint or "", 0)
        found = (found[key], *(t for i, t in enumerate(found) if i != key))
    elif kind == "array" and isinstance(value, dict):
        items = value.get("items")
        if isinstance(items, dict) and "anyOf" in items:
            found = found[::-1]
    return found


class RequestedSchema(Model):
    """An elicitation form: ``type: object`` and flat ``properties`` of primitive schemas."""

    type: Literal["object"]
    properties: dict[str, Any]
    required: list[str] | Unset = UNSET
    schema: str | Unset = named("$schema")

    def __post_init__(self) -> None:
        for key, value in self.properties.items():
            any_of(value, _primitive_order(value), f".properties[{key!r}]")


class ElicitResult(Model):
    action: Literal["accept", "cancel", "decline"]
    # schema.json says string | integer | boolean | string[]; the TypeScript source
    # says `number` (a NumberSchema answer may be 2.5): the TypeScript is followed.
    content: dict[str, str | float | bool | list[str]] | Unset = UNSET
