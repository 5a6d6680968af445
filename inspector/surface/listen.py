"""Building surfaces: an analysis listener, and one call that reads a capture.

:class:`SurfaceListener` rides along any :class:`~mcpeek.inspector.analysis.Analyzer`
(the viewer's session model adds it to its own; ``show`` and ``diff`` use
:func:`read_surfaces`). What a conversation *declared* (era, version, info,
capabilities, instructions) is the analyser's own
:class:`~mcpeek.inspector.analysis.era.Declared`, read when a snapshot is
taken; this module adds what the analysis does not keep: the listings as
they were answered, page by page, and their history (``Declared.tools`` is
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
from typing import Any

from mcpeek.inspector.analysis import AnalysisListener, Analyzer, Conversation, Entry, Flow
from mcpeek.inspector.capture.reader import CaptureReader
from mcpeek.inspector.capture.run import run_capture
from mcpeek.inspector.jsonrpc import MessageDecoder
from mcpeek.inspector.records import AnyRecord, Header
from mcpeek.inspector.replay.canonical import canonical
from mcpeek.inspector.surface.model import (
    KEY_FIELD,
    LIST_CHANGED,
    LIST_METHODS,
    Change,
    ConversationSurface,
    Drift,
    Version,
    changed_fields,
)
from mcpeek.inspector.surface.usage import mismatches


class _Tracker:
    """The listings of one conversation as they go by (mutable; snapshots are not)."""

    def __init__(self, conversation: Conversation) -> None:
        self.conversation = conversation
        self.lists: dict[str, dict[str, Any]] = {}
        self.pages: dict[str, dict[str, Any]] = {}  # a listing still being paged through
        self.listings: dict[str, list[int]] = {}
        self.history: dict[str, dict[str, list[Version]]] = {}
        self.drift: list[Drift] = []
        self.list_changed: dict[str, list[int]] = {}
        self.announced: set[str] = set()  # kinds announced since their last listing
        self.used: dict[str, int] = {}
        self.called: dict[str, set[str]] = {}

    def message(self, entry: Entry, flow: Flow, decoder: MessageDecoder) -> None:
        method = entry.method
        if entry.kind in ("request", "notification") and method is not None:
            key = f"{entry.dir}:{method}"
            self.used[key] = self.used.get(key, 0) + 1
            if entry.kind == "request" and method in ("tools/call", "prompts/get") and flow.name:
                self.called.setdefault(method, set()).add(flow.name)
            if entry.dir == "s2c" and method in LIST_CHANGED:
                for announced in LIST_CHANGED[method]:
                    self.list_changed.setdefault(announced, []).append(entry.seq)
                    self.announced.add(announced)
            return
        kind = LIST_METHODS.get(flow.method or "")
        if entry.kind != "result" or entry.dir != "s2c" or kind is None or flow.sender != "c2s":
            return
        result = entry.message(decoder).result_value()
        request = flow.attempts[-1].request if flow.attempts else None
        params = request.message(decoder).params_value() if request is not None else None
        if not isinstance(result, dict):
            return
        if not (isinstance(params, dict) and params.get("cursor") is not None):
            self.pages[kind] = {}  # no cursor: a listing from the start
        page = self.pages.setdefault(kind, {})
        items = result.get(kind)
        for item in items if isinstance(items, list) else ():
            name = item.get(KEY_FIELD[kind]) if isinstance(item, dict) else None
            if isinstance(name, str):
                page[name] = item
        if not result.get("nextCursor"):
            self._complete(kind, entry.seq, self.pages.pop(kind))

    def _complete(self, kind: str, seq: int, listing: dict[str, Any]) -> None:
        previous = self.lists.get(kind)
        history = self.history.setdefault(kind, {})
        announced = kind in self.announced
        self.announced.discard(kind)
        before_seq = self.listings[kind][-1] if self.listings.get(kind) else 0
        self.lists[kind] = listing
        self.listings.setdefault(kind, []).append(seq)
        if previous is None:
            for name, definition in listing.items():
                history[name] = [Version(seq, definition, False)]
            return
        for name in list(previous) + [n for n in listing if n not in previous]:
            before, after = previous.get(name), listing.get(name)
            if before is not None and after is not None and canonical(before) == canonical(after):
                continue
            history.setdefault(name, []).append(Version(seq, after, announced))
            change: Change = (
                "added" if before is None else "removed" if after is None else "changed"
            )
            fields = changed_fields(before, after) if change == "changed" else []
            rug_pull = change == "changed" and not announced
            self.drift.append(
                Drift(kind, name, change, before_seq, seq, fields, announced, rug_pull)
            )

    def snapshot(self) -> ConversationSurface:
        declared = self.conversation.declared
        lists = {kind: dict(items) for kind, items in self.lists.items()}
        for kind, pages in self.pages.items():  # a listing cut short: as far as it went
            lists.setdefault(kind, dict(pages))
        capabilities = {
            "server": declared.server_capabilities,
            "client": declared.client_capabilities,
        }
        undeclared, unused = mismatches(self.used, self.called, capabilities, lists)
        return ConversationSurface(
            conversation=self.conversation.key,
            era=declared.era,
            protocol_version=declared.protocol_version,
            client_info=declared.client_info,
            server_info=declared.server_info,
            client_capabilities=declared.client_capabilities,
            server_capabilities=declared.server_capabilities,
            instructions=declared.instructions,
            lists=lists,
            listings={k: list(v) for k, v in self.listings.items()},
            history={k: {n: list(v) for n, v in h.items()} for k, h in self.history.items()},
            drift=list(self.drift),
            list_changed={k: list(v) for k, v in self.list_changed.items()},
            used=dict(sorted(self.used.items())),
            undeclared=undeclared,
            unused=unused,
        )


class SurfaceListener(AnalysisListener):
    """Collects the surface of every conversation an analyser sees.

    Add it to an :class:`~mcpeek.inspector.analysis.Analyzer`'s listeners;
    :meth:`surfaces` takes a snapshot (plain data) at any time, in the order
    the conversations were first seen. Fed from one thread; a snapshot taken
    from another sees a consistent-enough state for display (lists are copied).
    """

    def __init__(self) -> None:
        self._trackers: dict[str, _Tracker] = {}
        self._decoder = MessageDecoder()

    def on_message(self, entry: Entry, flow: Flow, conversation: Conversation) -> None:
        tracker = self._trackers.get(conversation.key)
        if tracker is None:
            tracker = self._trackers[conversation.key] = _Tracker(conversation)
        tracker.message(entry, flow, self._decoder)

    def surfaces(self) -> list[ConversationSurface]:
        return [tracker.snapshot() for tracker in list(self._trackers.values())]


class CaptureSurface:
    """The surfaces of one capture file, and its header."""

    def __init__(self, path: Path, header: Header | None, conversations: list[ConversationSurface]):
        self.path = path
        self.header = header
        self.conversations = conversations


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
    return CaptureSurface(path, analyzer.header, listener.surfaces())
