"""The Analyzer's view of one HTTP exchange: which conversation its messages are in.

Only an ``initialize`` can be answered with a new session, so only a client
message that may be one, in an exchange whose request named no session, waits
for the response head; every other message is in its conversation at once.
"""

from __future__ import annotations

from mcpeek.inspector.analysis.conversation import Conversation
from mcpeek.inspector.records import Msg


class HttpExchange:
    """An HTTP exchange the Analyzer follows: the session its request named, its
    conversation once known, and the client messages waiting for it."""

    __slots__ = ("conversation", "pending", "session")

    def __init__(self, session: str | None) -> None:
        self.session = session
        self.conversation: Conversation | None = None
        self.pending: list[Msg] = []


def may_initialize(record: Msg) -> bool:
    """Whether a client's message may be an ``initialize`` (whose response head may name
    a new session). A cheap look at the bytes: a false yes only waits for that head."""
    return record.raw is None or '"initialize"' in record.raw


def session_of(headers: list[tuple[str, str]] | None) -> str | None:
    """The conversation key of the session ``headers`` name (``Mcp-Session-Id``), if any."""
    for name, value in headers or ():
        # (the length first: it rules out the other headers without lowering them)
        if len(name) == 14 and name.lower() == "mcp-session-id":
            return f"http:session:{value}"
    return None
