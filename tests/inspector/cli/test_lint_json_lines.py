"""``lint --format json`` writes each line as ``json`` encodes its object, byte for byte,
whatever the violation's text holds (the writer puts plain lines together itself)."""

from __future__ import annotations

import io
import json

import pytest

from mcpeek.inspector.cli.lint_report import FileResult, write_json
from mcpeek.inspector.views.findings import lint_json
from mcpeek.rules.engine import Reported

MESSAGES = [
    "result for tools/call (id 3) has no serverInfo",
    'a "quoted" name',
    "a back\\slash",
    "a tab\there, a newline\nthere",
    "\x7f and \x00",
    "shortened…",
    "naïve ünïcode — 日本",
    "a lone surrogate \udc80",
    "",
]


def violation(message: str, **fields: object) -> Reported:
    values: dict[str, object] = {
        "rule": "meta.server-info-missing",
        "severity": "warning",
        "msgs": [7, 8],
        "message": message,
        "spec": "https://modelcontextprotocol.io/specification/2026-07-28/basic/index#meta",
    }
    values.update(fields)
    return Reported(**values)  # type: ignore[arg-type]


def written(path: str, violations: list[Reported]) -> list[str]:
    out = io.StringIO()
    write_json([FileResult(path, violations)], out)
    return out.getvalue().splitlines(keepends=True)


def expected(path: str, violations: list[Reported]) -> list[str]:
    encode = json.JSONEncoder(ensure_ascii=False).encode
    return [encode(lint_json(path, v)) + "\n" for v in violations]


@pytest.mark.parametrize("message", MESSAGES)
def test_each_line_is_what_json_writes(message: str) -> None:
    found = [violation(message), violation(message, msgs=[]), violation(message, msgs=[1])]
    for path in ("caps/a.jsonl", 'odd "dir"/é.jsonl'):
        assert written(path, found) == expected(path, found)


def test_odd_parts_are_written_by_the_encoder_alike() -> None:
    found = [
        violation("x", made="fault"),  # a line with one more member
        violation("x", spec=""),
        violation("x", rule='odd "rule"', severity="info"),
        violation("x", msgs=[True]),  # (not an int: the encoder's true)
    ]
    assert written("a.jsonl", found) == expected("a.jsonl", found)
    assert '"made": "fault"' in written("a.jsonl", found)[0]
