"""Two captures' traffic side by side: the same requests, answered differently.

Requests are matched the way ``mcpeek serve`` matches a live request to a
recorded one: by method and canonical params
(:func:`~mcpeek.inspector.replay.script.match_key`: key order, the JSON-RPC id
and volatile ``_meta`` never matter; ``ignore`` pointers drop more), the
handshake (``initialize``, ``server/discover``) by its method alone. A key
sent N times in A and M times in B pairs its calls in order. The answers of a
pair are compared as ``replay`` compares a live answer with the recorded one
(:func:`~mcpeek.inspector.replay.diff.compare_responses`); a request of A with
no partner in B (or the other way) is a flow only in one capture. The answers
to the handshake and to the list requests are the surface itself: the surface
comparison reports them member by member, so they are not compared again here.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import msgspec

from mcpeek.inspector.jsonrpc import json_value
from mcpeek.inspector.records import AnyRecord
from mcpeek.inspector.replay.canonical import Pointer
from mcpeek.inspector.replay.diff import MISSING, compare_responses
from mcpeek.inspector.replay.script import HANDSHAKES, Call, build_script
from mcpeek.inspector.surface.compare import PathDifference, path_difference
from mcpeek.inspector.surface.model import LIST_METHODS

#: Requests whose answers are the surface itself: compared item by item there, not here.
SURFACE_METHODS = HANDSHAKES | frozenset(LIST_METHODS)


class Request(msgspec.Struct, omit_defaults=True):
    """A client request of one capture: its method, what it named, its message's seq."""

    method: str
    seq: int
    name: str | None = None


class AnswerDifference(msgspec.Struct, omit_defaults=False):
    """The same request in both captures, answered differently."""

    method: str
    name: str | None
    a_seq: int
    b_seq: int
    paths: list[PathDifference]


class TrafficDifferences(msgspec.Struct, omit_defaults=False):
    answers: list[AnswerDifference]
    only_a: list[Request]
    only_b: list[Request]

    def __bool__(self) -> bool:
        return bool(self.answers or self.only_a or self.only_b)


def _calls(records: Iterable[AnyRecord], ignore: Sequence[Pointer]) -> dict[bytes, list[Call]]:
    script = build_script(records, ignore)
    by_key: dict[bytes, list[Call]] = {}
    for calls in script.calls.values():
        for call in calls:
            # Not by requestState: a server seals it afresh on every run; the
            # attempts of a chain pair in order.
            match = call.method.encode() if call.method in HANDSHAKES else call.key
            by_key.setdefault(match, []).append(call)
    for calls in by_key.values():
        calls.sort(key=lambda call: call.seq)
    return by_key


def _request(call: Call) -> Request:
    params = call.params if isinstance(call.params, dict) else {}
    named = params.get("name", params.get("uri"))
    return Request(call.method, call.seq, named if isinstance(named, str) else None)


def _answer(call: Call) -> Any:
    for step in call.steps:
        if step.kind == "response":
            return json_value(step.data)
    return MISSING  # never answered


def compare_traffic(
    a: Iterable[AnyRecord], b: Iterable[AnyRecord], ignore: Sequence[Pointer] = ()
) -> TrafficDifferences:
    """Both captures' records (the header first) → what their traffic does differently."""
    calls_a, calls_b = _calls(a, ignore), _calls(b, ignore)
    out = TrafficDifferences([], [], [])
    for key, in_a in calls_a.items():
        in_b = calls_b.get(key, [])
        for call_a, call_b in zip(in_a, in_b, strict=False):
            if call_a.method in SURFACE_METHODS:
                continue  # the surface comparison says what differs, item by item
            answer_a, answer_b = _answer(call_a), _answer(call_b)
            if answer_a is MISSING or answer_b is MISSING:
                # answered in one capture only: the whole answer is the difference
                paths = [] if answer_a is answer_b else [path_difference("", answer_a, answer_b)]
            else:
                paths = [
                    path_difference(d.path, d.recorded, d.live)
                    for d in compare_responses(answer_a, answer_b, ignore)
                ]
            if paths:
                request = _request(call_a)
                out.answers.append(
                    AnswerDifference(request.method, request.name, call_a.seq, call_b.seq, paths)
                )
        out.only_a += [_request(call) for call in in_a[len(in_b) :]]
    for key, in_b in calls_b.items():
        out.only_b += [_request(call) for call in in_b[len(calls_a.get(key, [])) :]]
    out.answers.sort(key=lambda d: d.a_seq)
    out.only_a.sort(key=lambda r: r.seq)
    out.only_b.sort(key=lambda r: r.seq)
    return out
