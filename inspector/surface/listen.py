"""Building surfaces: an analysis listener, and one call that reads a capture.

:class:`SurfaceListener` rides along any :class:`~mcpeek.inspector.analysis.Analyzer`
(the viewer's session model adds it to its own; ``show`` and ``diff`` use
:func:`read_surfaces`). What a conversation *declared* (era, version, info,
capabilities, instructions) is the analyser's own
:class:`~mcpeek.inspector.analysis.era.Declared`, read when a snapshot is
taken; this package adds what the analysis does not keep
(:mod:`~mcpeek.inspector.surface.tracker`): the listings as they were
answered, page by page, and their history (``Declared.tools`` is
the union of every tool ever seen, which is what the schema rules need, not
what the server offers now).

A listing starts with a list request without ``cursor`` and is complete at
the page without ``nextCursor``; only complete listings are compared with
the previous one. A listing cut short (its last page never came) is shown in
``lists`` as far as it went once the conversation has ended.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from mcpeek.inspector.analysis import AnalysisListener, Analyzer, Conversation, Entry, Flow
from mcpeek.inspector.capture.reader import CaptureReader
from mcpeek.inspector.capture.run import run_capture
from mcpeek.inspector.jsonrpc import MessageDecoder
from mcpeek.inspector.records import AnyRecord, Header
from mcpeek.inspector.surface.model import (
    LIST_CHANGED,
    LIST_METHODS,
    ConversationSurface,
)
from mcpeek.inspector.surface.tracker import ListingTracker

#: Requests and notifications the tracker looks at beyond counting them.
NOTED = frozenset({"tools/call", "prompts/get", *LIST_CHANGED})
#: Client requests whose results it reads: the lists, and the calls a 2026-07-28
#: server may answer with input requests.
READ_ANSWERS = frozenset({*LIST_METHODS, "tools/call", "prompts/get", "resources/read"})


class SurfaceListener(AnalysisListener):
    """Collects the surface of every conversation an analyser sees.

    Add it to an :class:`~mcpeek.inspector.analysis.Analyzer`'s listeners;
    :meth:`surfaces` takes a snapshot (plain data) at any time, in the order
    the conversations were first seen. Fed from one thread; a snapshot taken
    from another sees a consistent-enough state for display (lists are copied).
    """

    def __init__(self) -> None:
        self._trackers: dict[str, ListingTracker] = {}
        self._last: ListingTracker | None = None  # the conversation of the last message
        self._decoder = MessageDecoder()

    def on_message(self, entry: Entry, flow: Flow, conversation: Conversation) -> None:
        # Called for every message a viewer loads: most are counted and left.
        tracker = self._last
        if tracker is None or tracker.conversation is not conversation:
            tracker = self._trackers.get(conversation.key)
            if tracker is None:
                tracker = self._trackers[conversation.key] = ListingTracker(conversation)
            self._last = tracker
        method = entry.method
        if method is not None:  # a request or a notification
            used = tracker.used
            key = (entry.dir, method)
            used[key] = used.get(key, 0) + 1
            if method in NOTED:
                tracker.sent(entry, flow)
        elif flow.method in READ_ANSWERS and entry.kind == "result":
            tracker.answered(entry, flow, self._decoder)

    def surfaces(self) -> list[ConversationSurface]:
        return [tracker.snapshot() for tracker in list(self._trackers.values())]


class CaptureSurface:
    """The surfaces of one capture file, its header, and the reader's ``problems``
    (lines that could not be read, skipped)."""

    def __init__(
        self,
        path: Path,
        header: Header | None,
        conversations: list[ConversationSurface],
        problems: list[str],
    ) -> None:
        self.path = path
        self.header = header
        self.conversations = conversations
        self.problems = problems


def read_surfaces(
    path: Path, *, records: Callable[[AnyRecord], None] | None = None
) -> CaptureSurface:
    """Read a whole capture through the one loop (:func:`run_capture`) and return its
    surfaces. ``records`` sees every record too (``diff`` keeps them for the traffic).
    Raises :class:`~mcpeek.inspector.capture.reader.CaptureError` for a file that is
    not a readable capture."""
    listener = SurfaceListener()
    analyzer = Analyzer([listener], timeout=float("inf"))
    reader = CaptureReader(path)
    run_capture(reader, analyzer, each=records)
    return CaptureSurface(path, analyzer.header, listener.surfaces(), list(reader.problems))
