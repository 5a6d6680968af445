"""What the replay driver and a transport (stdio, Streamable HTTP, a test's fake) share.

The :class:`~mcpeek.inspector.replay.replay.Replayer` hands a transport one
:class:`Outgoing` at a time; the transport hands back what the server sends
through ``deliver`` and says through ``closed`` when the server went away.
:class:`ReplayError` is the one failure that stops a replay.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from mcpeek.inspector.replay.replay_plan import ClientStep, HttpStep


class ReplayError(Exception):
    """The live server cannot be started or reached: ``str()`` is for the user."""


@dataclass
class Outgoing:
    """One thing to send: a JSON-RPC message (``data``) or a bare HTTP request."""

    data: bytes | None
    kind: str  # request, notification, response, http
    method: str | None = None
    name: str | None = None
    step: ClientStep | HttpStep | None = None
    # A request: the transport calls this when the exchange failed without a JSON-RPC
    # response (an HTTP error status); True when that ended the wait for one.
    failed: Callable[[str], bool] | None = None


Deliver = Callable[[bytes], None]
Closed = Callable[[str], None]


class Transport(Protocol):
    async def start(self, deliver: Deliver, closed: Closed) -> None:
        """Connect (spawn the server); raise :class:`ReplayError` if it cannot be."""

    async def send(self, item: Outgoing) -> None:
        """Send one item; what the server answers comes back through ``deliver``."""

    async def close(self) -> None:
        """End the session (close stdin, stop the process, close connections)."""
