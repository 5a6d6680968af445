"""The literals a secret pattern's every match holds, read from its parse tree."""

from __future__ import annotations

import re

import pytest

from mcpeek.inspector.capture.redact_literals import required_literals


@pytest.mark.parametrize(
    ("pattern", "flags", "literals"),
    [
        # The parser takes the common "A" out ("A(?:3T…|BIA|KIA)"): glued back on.
        (r"(?:A3T[A-Z0-9]|ABIA|AKIA)[0-9A-Z]{16}", 0, {"A3T", "ABIA", "AKIA"}),
        (r"(glpat|gldt|glrt)-[A-Za-z0-9_\-]{20,50}", 0, {"glpat", "gldt", "glrt"}),
        (r"xox(?:a|b|p)-\d+", re.IGNORECASE, {"xox"}),
        # A branch with an alternative that begins with no literal is not glued.
        (r"AB(?:CD|[0-9]E)x", 0, {"AB"}),
        (r"[a-z]{4}:\d", 0, set()),  # one character: not worth a test
    ],
)
def test_required_literals(pattern: str, flags: int, literals: set[str]) -> None:
    assert required_literals(re.compile(pattern, flags)) == frozenset(literals)


def test_every_match_holds_one_of_them() -> None:
    regex = re.compile(r"(?:A3T[A-Z0-9]|ABIA|ACCA|AKIA|ASIA)[0-9A-Z]{16}")
    literals = required_literals(regex)
    for text in ("A3TX" + "0" * 16, "ASIA" + "Z" * 16, "ACCA" + "9" * 16):
        assert regex.fullmatch(text)
        assert any(literal in text for literal in literals)
