"""Tying a message to its request through the HTTP exchange, when its id cannot.

On Streamable HTTP a response in a POST's own response body answers that POST's
request: the exchange ties them, even when the answer's id is null or absent. And
an origin that issues no session id may serve several clients at once: a request
is keyed by its exchange there (``(requester, id, exchange)``), and a notification
that names a request or a progress token is tied to one only when exactly one fits.
These functions read the conversation's tables; they keep no state.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcpeek.inspector.analysis.flow import Attempt, Entry, Flow

Key = tuple[Any, ...]
Requests = Mapping[Key, tuple[Flow, Attempt]]


def exchange_request(in_flight: Requests, entry: Entry) -> Key | None:
    """The request an id-less (or null-id) server answer on an exchange answers: the
    one request of that exchange still in flight (a legacy server rejecting a
    ``server/discover`` probe answers ``-32000`` with a null id); ``None`` if not one."""
    if entry.dir != "s2c":
        return None
    found = [
        key
        for key, (_, attempt) in in_flight.items()
        if key[0] == "c2s" and attempt.request.ch == entry.ch
    ]
    return found[0] if len(found) == 1 else None


def shared_target(in_flight: Requests, recent: Requests, target: Key) -> Key | None:
    """The request a cancellation POSTed on its own names, on a sessionless origin: the
    one with that id (in flight first, else recent), whichever exchange it came on;
    ``None`` when several could be meant (an observer cannot tell whose: better
    silent than wrong); ``target`` itself when none has that id."""
    for table in (in_flight, recent):
        keys = [k for k in table if k[:2] == target]
        if len(keys) == 1:
            return keys[0]
        if keys:
            return None
    return target


def shared_progress(
    progress: Mapping[Key, Flow], recent: Mapping[Key, Flow], token: Key, channel: str
) -> tuple[Flow | None, bool]:
    """The flow a progress notification on a sessionless origin belongs to, and whether
    its token is known at all: the request of its own exchange first, else the one
    request of any exchange with that token; several: ambiguous (``None``, ``True``)."""
    key = (*token, channel)
    flow = progress.get(key) or recent.get(key)
    if flow is not None:
        return flow, True
    for table in (progress, recent):
        owners = {f.number: f for k, f in table.items() if k[:2] == token}
        if len(owners) == 1:
            return next(iter(owners.values())), True
        if owners:
            return None, True
    return None, False
