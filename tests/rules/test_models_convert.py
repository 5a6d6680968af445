"""models._base.convert: what msgspec.convert gives, value or error text, for any type.

The schema rules word their findings from msgspec's errors, so the faster conversion
of a union through a held Struct must give back the very same text (path included).
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec
import pytest

from mcpeek.rules.models._base import convert
from mcpeek.rules.models.modern import InputRequest


def outcome(convert_with: Any, value: Any, typ: Any) -> tuple[str, Any]:
    try:
        return "value", msgspec.to_builtins(convert_with(value, typ))
    except msgspec.ValidationError as exc:
        return "error", str(exc)


FORM = {"mode": "form", "message": "Sure?", "requestedSchema": {"type": "object"}}
CASES: list[tuple[Any, Any]] = [
    # an input request: fine, and wrong at the root, in a member, deep in a __post_init__
    (
        {
            "method": "elicitation/create",
            "params": {**FORM, "requestedSchema": {"type": "object", "properties": {}}},
        },
        InputRequest,
    ),
    ({"method": "elicitation/create", "params": FORM}, InputRequest),
    ({"method": "roots/list"}, InputRequest),
    ({"method": "nope"}, InputRequest),
    ({"params": {}}, InputRequest),
    ("not an object", InputRequest),
    (None, InputRequest),
    ({"method": "sampling/createMessage", "params": {"messages": 3}}, InputRequest),
    # plain types: a str, a Literal, a list (errors at the root and at an index)
    ("x", str),
    (1, str),
    ("b", Literal["a", "b"]),
    ("c", Literal["a", "b"]),
    ([1, 2], list[int]),
    ([1, "2"], list[int]),
    ({"a": [1, {"b": "c"}]}, dict[str, list[int | dict[str, int]]]),
]


@pytest.mark.parametrize(("value", "typ"), CASES)
def test_convert_gives_what_msgspec_convert_gives(value: Any, typ: Any) -> None:
    assert outcome(convert, value, typ) == outcome(msgspec.convert, value, typ)


def test_an_error_keeps_its_whole_path() -> None:
    kind, text = outcome(convert, {"method": "elicitation/create", "params": FORM}, InputRequest)
    assert kind == "error"
    assert (
        text
        == "Object missing required field `properties` - at `$.requestedSchema` - at `$.params`"
    )
