"""The listings of one conversation as they go by, and their history.

A :class:`ListingTracker` is fed by the
:class:`~mcpeek.inspector.surface.listen.SurfaceListener` with the messages
that matter to the surface: list answers page by page (a listing is complete
at the page without ``nextCursor``, and compared with the one before: added,
removed, changed, announced or not), calls by name, ``list_changed``
announcements, and the input requests of a 2026-07-28 result.
:meth:`ListingTracker.snapshot` gives the conversation's
:class:`~mcpeek.inspector.surface.model.ConversationSurface`.
"""

from __future__ import annotations

from typing import Any

import msgspec

from mcpeek.inspector.analysis import Conversation, Entry, Flow
from mcpeek.inspector.jsonrpc import MessageDecoder, json_value
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


class _ListRequestParams(msgspec.Struct):
    cursor: Any = None


class _ListRequest(msgspec.Struct):
    params: _ListRequestParams | None = None


class _ListAnswer(msgspec.Struct):
    result: msgspec.Raw = msgspec.Raw(b"")  # (Raw takes no None: empty when absent)


class _InputRequest(msgspec.Struct):
    method: str | None = None


class _InputRequiredResult(msgspec.Struct):
    inputRequests: dict[str, _InputRequest] = {}


class _InputRequired(msgspec.Struct):
    result: _InputRequiredResult


_decode_input_required = msgspec.json.Decoder(_InputRequired).decode

_decode_request = msgspec.json.Decoder(_ListRequest).decode
_decode_answer = msgspec.json.Decoder(_ListAnswer).decode


class ListingTracker:
    """The listings of one conversation as they go by (mutable; snapshots are not).

    Memory stays bounded by what the server offers and how often it changed,
    not by the length of the capture: a listing equal to the previous one
    only counts (a client that lists every few seconds adds nothing else).
    """

    def __init__(self, conversation: Conversation) -> None:
        self.conversation = conversation
        self.lists: dict[str, dict[str, Any]] = {}
        self.pages: dict[str, dict[str, Any]] = {}  # a listing still being paged through
        self.listed: dict[str, int] = {}  # complete listings per kind
        self.last_listing: dict[str, int] = {}  # seq of the last one
        # The exact bytes of the last one-page listing's result: the same bytes
        # again (the common case) are the same listing, with no decode at all.
        self.last_bytes: dict[str, bytes] = {}
        self.history: dict[str, dict[str, list[Version]]] = {}
        self.drift: list[Drift] = []
        self.list_changed: dict[str, int] = {}
        self.announced: set[str] = set()  # kinds announced since their last listing
        self.used: dict[tuple[str, str], int] = {}
        self.called: dict[str, set[str]] = {}

    def sent(self, entry: Entry, flow: Flow) -> None:
        """A request or notification the listener notes (the caller counted it)."""
        method = entry.method
        if entry.kind == "request" and method in ("tools/call", "prompts/get") and flow.name:
            names = self.called.get(method)
            if names is None:
                names = self.called[method] = set()
            names.add(flow.name)
        elif entry.dir == "s2c" and method in LIST_CHANGED:
            for announced in LIST_CHANGED[method]:
                self.list_changed[announced] = self.list_changed.get(announced, 0) + 1
                self.announced.add(announced)

    def answered(self, entry: Entry, flow: Flow, decoder: MessageDecoder) -> None:
        """A result to a client request whose answer the listener reads."""
        if entry.dir != "s2c" or flow.sender != "c2s":
            return
        if flow.attempts and flow.attempts[-1].result_type == "input_required":
            self._input_requests(entry)
            return
        kind = LIST_METHODS.get(flow.method or "")
        if kind is None:
            return
        try:
            raw = _decode_answer(entry.wire()).result
            request = flow.attempts[-1].request
            params = _decode_request(request.wire()).params
        except (msgspec.MsgspecError, IndexError, RecursionError):
            return  # not a list answer this model can read (the rules say why)
        first_page = params is None or params.cursor is None
        data = bytes(raw)
        if first_page and self.last_bytes.get(kind) == data and kind not in self.pages:
            self._counted(kind, entry.seq)
            return
        result = json_value(data) if data else None  # (None when nested too deep)
        if not isinstance(result, dict):
            return
        if first_page:
            self.pages[kind] = {}  # a listing from the start
        page = self.pages.setdefault(kind, {})
        items = result.get(kind)
        for item in items if isinstance(items, list) else ():
            name = item.get(KEY_FIELD[kind]) if isinstance(item, dict) else None
            if isinstance(name, str):
                page[name] = item
        if not result.get("nextCursor"):
            single = first_page
            self._complete(kind, entry.seq, self.pages.pop(kind))
            if single:
                self.last_bytes[kind] = data
            else:
                self.last_bytes.pop(kind, None)

    def _input_requests(self, entry: Entry) -> None:
        """A 2026-07-28 server asks the client through the result (``inputRequests``,
        e.g. an ``elicitation/create``): that uses the client's capability as a
        server request would."""
        try:
            asked = _decode_input_required(entry.wire()).result.inputRequests
        except (msgspec.MsgspecError, RecursionError):
            return  # not the shape the spec gives it (the rules say so)
        for request in asked.values():
            if request.method is not None:
                key = ("s2c", request.method)
                self.used[key] = self.used.get(key, 0) + 1

    def _counted(self, kind: str, seq: int) -> int:
        """One more complete listing; returns the seq of the one before (0: none)."""
        before = self.last_listing.get(kind, 0)
        self.listed[kind] = self.listed.get(kind, 0) + 1
        self.last_listing[kind] = seq
        self.announced.discard(kind)  # an announcement is answered by the listing after it
        return before

    def _complete(self, kind: str, seq: int, listing: dict[str, Any]) -> None:
        previous = self.lists.get(kind)
        history = self.history.setdefault(kind, {})
        announced = kind in self.announced
        before_seq = self._counted(kind, seq)
        self.lists[kind] = listing
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
        # Each dict() is one atomic copy under the GIL: a viewer may take a snapshot
        # while its loader thread feeds the listener.
        declared = self.conversation.declared
        lists = {kind: dict(items) for kind, items in dict(self.lists).items()}
        for kind, pages in dict(self.pages).items():  # a listing cut short: as far as it went
            lists.setdefault(kind, dict(pages))
        capabilities = {
            "server": declared.server_capabilities,
            "client": declared.client_capabilities,
        }
        used = dict(self.used)
        called = {method: set(names) for method, names in dict(self.called).items()}
        undeclared, unused = mismatches(used.keys(), called, capabilities, lists)
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
            listed=dict(self.listed),
            history={
                k: {n: list(v) for n, v in dict(h).items()} for k, h in dict(self.history).items()
            },
            drift=list(self.drift),
            list_changed=dict(self.list_changed),
            used={f"{d}:{m}": n for (d, m), n in sorted(used.items())},
            undeclared=undeclared,
            unused=unused,
        )
