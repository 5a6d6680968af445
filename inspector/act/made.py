"""Which recorded answers mcpeek made (``msg.made``), for the readers that must tell.

``replay`` sends no request that mcpeek answered in place (the server never
saw it), and compares no flow whose recorded answer mcpeek made (an edit, a
corruption): it is not the server's answer.
"""

from __future__ import annotations

from collections.abc import Sequence

from mcpeek.inspector.analysis.flow import Flow


def made_answers_of(flows: Sequence[Flow]) -> tuple[set[int], set[int]]:
    """The seqs of client requests mcpeek answered in place, and the numbers of the
    flows whose recorded answer mcpeek made (``msg.made``)."""
    in_place: set[int] = set()
    made: set[int] = set()
    for flow in flows:
        for attempt in flow.attempts:
            response = attempt.response
            if response is None or response.record.made is None:
                continue
            made.add(flow.number)
            if response.record.made == "reply":
                in_place.add(attempt.request.seq)
    return in_place, made
