"""Whose fault a finding is (``mcpeek.rules.blame``): the policy of serve --strict."""

from __future__ import annotations

import pytest

from mcpeek.rules.blame import blames_the_client
from mcpeek.rules.engine import Reported

DIRECTIONS = {1: "c2s", 2: "s2c", 3: "c2s"}


def reported(rule: str, msgs: list[int]) -> Reported:
    return Reported(rule=rule, severity="error", msgs=msgs, message="m", spec="")


@pytest.mark.parametrize(
    ("rule", "msgs", "blamed"),
    [
        ("id.null", [1], True),  # the client sent the offending message
        ("id.null", [2], False),  # the server did: the capture's own behaviour
        ("response.unknown-id", [2, 3], True),  # the last message decides
        ("response.unknown-id", [3, 2], False),
        ("id.null", [], False),  # no message to blame
        ("id.null", [99], False),  # a message of unknown direction
        ("request.unanswered", [1], False),  # the mock's gap, not the client's
        ("inspector.rule-crashed", [1], False),  # mcpeek's own bug
    ],
)
def test_only_what_the_client_sent_blames_it(rule: str, msgs: list[int], blamed: bool) -> None:
    assert blames_the_client(reported(rule, msgs), DIRECTIONS.get) is blamed
