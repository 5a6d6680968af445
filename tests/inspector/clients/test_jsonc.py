"""The position-keeping JSON reader: same values as ``json``, exact spans, clear errors."""

from __future__ import annotations

import json

import pytest

from mcpeek.inspector.clients.jsonc import MAX_DEPTH, Array, JsoncError, Object, parse
from tests.inspector.clients.values import plain

SAMPLES = [
    "{}",
    "[]",
    '{"a": 1, "b": [true, false, null], "c": {"d": "e\\u00e9\\n\\"q\\""}}',
    '  [ -0, 1.5, -2e-3, 10E+2, "", "\\ud83d\\ude00" ]  ',
    '{"dup": 1, "dup": 2}',
    '"just a string"',
    "\ufeff{}",
]


@pytest.mark.parametrize("text", SAMPLES)
def test_values_are_what_json_loads_gives(text: str) -> None:
    assert plain(parse(text)) == json.loads(text.lstrip("\ufeff"))


def test_every_value_knows_its_span() -> None:
    text = '{ "command" : "npx",\n  "args": [ "-y", 2 ] }'
    root = parse(text)
    assert isinstance(root, Object)
    assert (root.start, root.end) == (0, len(text))
    command, args = root.members
    assert text[command.key_start : command.value.end] == '"command" : "npx"'
    assert text[command.lead : command.key_start] == " "
    assert text[args.lead : args.key_start] == "\n  "
    assert isinstance(args.value, Array)
    assert text[args.value.start : args.value.end] == '[ "-y", 2 ]'
    assert [text[i.start : i.end] for i in args.value.items] == ['"-y"', "2"]
    assert [text[c] for c in args.value.commas] == [","]


def test_jsonc_comments_and_trailing_commas() -> None:
    text = '// head\n{ /* a */ "a": [1, 2,], // tail\n "b": {"c": 3,}, }'
    root = parse(text, jsonc=True)
    assert plain(root) == {"a": [1, 2], "b": {"c": 3}}
    assert isinstance(root, Object)
    array = root.members[0].value
    assert isinstance(array, Array) and len(array.commas) == 2  # the trailing one too


@pytest.mark.parametrize(
    ("text", "jsonc", "where", "reason"),
    [
        ('{"a": 1,}', False, "1:9", "trailing comma"),
        ('{\n  // note\n  "a": 1}', False, "2:3", "comment"),
        ('{\n  "a": 1\n  "b": 2\n}', False, "3:3", "expected ','"),
        ('{"a" 1}', False, "1:6", "expected ':'"),
        ("{'a': 1}", True, "1:2", "quoted"),
        ('{"a": tru}', False, "1:7", "unexpected character"),
        ('{"a": "x', False, "1:7", "unterminated"),
        ('{"a": "\\q"}', False, "1:8", "escape"),
        ('{"a": 1} {', False, "1:10", "after the end"),
        ('{"a": /* open', True, "1:7", "never closed"),
        ("", False, "1:1", "ends where a value should be"),
        ('{"a": [1, 2', False, "1:12", "ends before the closing ']'"),
    ],
)
def test_errors_name_line_and_column(text: str, jsonc: bool, where: str, reason: str) -> None:
    with pytest.raises(JsoncError) as caught:
        parse(text, jsonc=jsonc)
    assert str(caught.value).startswith(where + ": ")
    assert reason in str(caught.value)


def test_deep_nesting_is_refused_not_a_recursion_error() -> None:
    with pytest.raises(JsoncError, match="nested too deep"):
        parse("[" * (MAX_DEPTH + 5))
    assert plain(parse("[" * 50 + "]" * 50)) == json.loads("[" * 50 + "]" * 50)
