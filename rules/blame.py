"""Whose fault a finding is: the policy ``serve --strict`` and the pytest plugin share.

A mock server (``mcpeek serve``, the plugin's ``mcp_replay``) judges the
client under test, so it keeps only the findings whose offending message the
client sent. Two rules never blame the client even then:

* ``request.unanswered``: the mock answers only what the capture recorded; an
  unanswered request is the capture's gap, not the client's fault.
* ``inspector.rule-crashed``: mcpeek's own bug.

Nor does a finding on a message mcpeek made (``Reported.made``: an edit, an
answer in place, a corruption asked for with ``--fault`` or ``-s``).
"""

from __future__ import annotations

from collections.abc import Callable

from mcpeek.rules.engine import Reported

NOT_THE_CLIENTS = frozenset({"request.unanswered", "inspector.rule-crashed"})


def blames_the_client(reported: Reported, direction: Callable[[int], str | None]) -> bool:
    """True when ``reported`` is the client's fault: its last message went client → server.

    ``direction(seq)`` tells which way the message numbered ``seq`` went
    (``"c2s"``, ``"s2c"``, or ``None`` when unknown).
    """
    if reported.rule in NOT_THE_CLIENTS or not reported.msgs or reported.made is not None:
        return False
    return direction(reported.msgs[-1]) == "c2s"
