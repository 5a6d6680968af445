"""A capture as a viewer sees it: flows as rows, their violations, a summary.

:class:`SessionModel` is the data model behind ``mcpeek view`` (and any other
front end): it is an :class:`~mcpeek.inspector.analysis.AnalysisListener` that
turns the analyser's flows into :class:`~mcpeek.inspector.views.flow_item.FlowItem`
rows, in the order the flows started, and attaches violations to them. It
never imports a UI toolkit and does no I/O of its own; a loader feeds it
records (from a file, following a growing file, or live) and a front end
reads it.

Concurrency: one thread feeds (the loader), another reads (the UI). Appends
and attribute updates are atomic under the GIL, and so are a deque's
``append`` and ``popleft``: the rows that changed are queued on one by the
feeder and drained by :meth:`SessionModel.take_changes` in the UI, so the UI
redraws only what moved, once per batch rather than once per message, and
the feeder never waits for a lock on its hot path.

Violations come from two places. A capture written by a proxy with live
checks holds ``violation`` records; they are shown as they are read. A full
re-check (the same rules ``mcpeek lint`` runs) can replace them later with
:meth:`SessionModel.set_findings`.
"""

from __future__ import annotations

import threading
from array import array
from collections import deque
from collections.abc import Iterable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from mcpeek.inspector.analysis import AnalysisListener, Analyzer, Conversation, Entry, Flow
from mcpeek.inspector.analysis.analyzer import DEFAULT_TIMEOUT
from mcpeek.inspector.records import Act, Event, Header, Http, Msg, Record, Stderr, Violation
from mcpeek.inspector.surface import SurfaceListener
from mcpeek.inspector.views.flow_item import SEVERITY_RANK, FlowItem
from mcpeek.inspector.views.in_flight import InFlight

# FlowItem and SEVERITY_RANK are imported from here by the front ends and the filters.
__all__ = ["SEVERITY_RANK", "Changes", "FlowItem", "SessionModel"]


class Changes:
    """What moved since the last look: rows added, rows changed, violations."""

    __slots__ = ("added", "changed", "findings")

    def __init__(self, added: int = 0, changed: frozenset[int] = frozenset()) -> None:
        self.added = added  # rows appended (they are the last ``added`` rows)
        self.changed = changed  # indexes of existing rows that changed
        self.findings = False

    def __bool__(self) -> bool:
        return bool(self.added or self.changed or self.findings)


class SessionModel(AnalysisListener):
    sees_proxy_answers = True  # the Http tab shows mcpeek's own 502 of a by-proxy flow

    def __init__(self, path: Path | str, *, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.path = Path(path)
        self.in_flight = InFlight()  # the requests not answered yet: timers, counts
        #: The server surface of each conversation (the handshake view reads it).
        self.surface = SurfaceListener()
        self.analyzer = Analyzer(
            [self, self.in_flight, self.surface], timeout=timeout, keep_flows=True
        )
        self.items: list[FlowItem] = []
        self.findings: list[Violation] = []
        self.header: Header | None = None
        self.problems: list[str] = []
        self.records = 0
        self.messages = 0
        self.ended = False  # the wrapped server exited (or the proxy stopped)
        self.loaded = False  # the loader has read everything there was
        self._row_of_flow: dict[int, int] = {}  # only for flows not numbered as rows
        self._flow_of_seq = array("I")  # seq -> flow number (0: not a message)
        self._lock = threading.Lock()  # findings only: they are replaced wholesale
        self._rows_taken = 0  # rows the reader has been told of
        self._changed: deque[int] = deque()
        self._findings_changed = False
        self._orphan_findings: list[Violation] = []  # seen before their message
        self.exchanges: dict[str, list[Http]] = {}  # HTTP records by exchange id
        self.stderr: list[Stderr] = []
        self.listening: str | None = None  # an HTTP proxy's own address (its listen event)
        # What mcpeek did (--fault, -s): by the seq of the message delivered after it,
        # and the acts no message followed (a drop, a disconnect).
        self.acts: dict[int, Act] = {}
        self.unattached_acts: list[Act] = []
        self._act: Act | None = None

    # -- feeding (loader thread) -------------------------------------------------
    def feed(self, records: Iterable[Record]) -> None:
        analyzer = self.analyzer
        for record in records:
            if isinstance(record, Header):
                self.header = record
                if analyzer.header is not None:
                    continue
            self.records += 1
            analyzer.feed(record)
            if isinstance(record, Event) and record.event == "exit":
                self.ended = True

    def finish(self) -> None:
        """The capture is complete: end what is still open (unanswered, closed)."""
        self.analyzer.finish()
        self.loaded = True

    def on_record(self, record: Record, conversation: Conversation | None) -> None:
        if type(record) is Msg:  # most records: nothing to keep here
            if self._act is not None:  # the message an act record was about
                self.acts[record.seq] = self._act
                self._act = None
            return
        if isinstance(record, Act):
            self._act = record
            if record.action in ("drop", "disconnect", "consume"):  # no message follows
                self.unattached_acts.append(record)
                self._act = None
            return
        if isinstance(record, Violation):
            self._attach(record)
        elif isinstance(record, Http):
            self.exchanges.setdefault(record.x, []).append(record)
        elif isinstance(record, Stderr):
            self.stderr.append(record)
        elif isinstance(record, Event) and record.event == "listen" and record.addr:
            self.listening = record.addr

    def on_message(self, entry: Entry, flow: Flow, conversation: Conversation) -> None:
        self.messages += 1
        seqs = self._flow_of_seq
        if entry.seq >= len(seqs):  # grow in steps: one allocation per thousands of records
            seqs.frombytes(bytes(seqs.itemsize * max(entry.seq + 1 - len(seqs), 4096)))
        seqs[entry.seq] = flow.number
        row = self.row_of_flow(flow.number)
        if row is None:
            if flow.number - 1 != len(self.items):  # flows start in number order; else map
                self._row_of_flow[flow.number] = len(self.items)
            self.items.append(FlowItem(flow))
        else:
            self.items[row].version += 1
            self._changed.append(row)

    def on_flow_end(self, flow: Flow, conversation: Conversation) -> None:
        row = self.row_of_flow(flow.number)
        if row is not None:
            self.items[row].version += 1
            self._changed.append(row)  # ended by the clock (unanswered): no message told

    # -- violations -----------------------------------------------------------------
    def _attach(self, finding: Violation) -> None:
        with self._lock:
            self.findings.append(finding)
            self._findings_changed = True
            # ``msgs`` lists the offending message last (docs/capture-format.md)
            row = self.row_of_seq(finding.msgs[-1]) if finding.msgs else None
            if row is None:
                self._orphan_findings.append(finding)
                return
            self.items[row].add_finding(finding)
            self.items[row].version += 1
            self._changed.append(row)

    def set_findings(self, findings: Iterable[Violation]) -> None:
        """Replace every violation (e.g. with a full re-check's)."""
        with self._lock:
            for row, item in enumerate(self.items):
                if item.findings:
                    item.clear_findings()
                    item.version += 1
                    self._changed.append(row)
            self.findings = []
            self._orphan_findings = []
        for finding in findings:
            self._attach(finding)
        with self._lock:
            self._findings_changed = True

    def row_of_seq(self, seq: int) -> int | None:
        if 0 < seq < len(self._flow_of_seq):
            number = self._flow_of_seq[seq]
            if number:
                return self.row_of_flow(number)
        return None

    def row_of_flow(self, number: int) -> int | None:
        row = number - 1
        items = self.items
        if 0 <= row < len(items) and items[row].flow.number == number:
            return row
        return self._row_of_flow.get(number)

    @property
    def changed_meanwhile(self) -> bool:
        """Rows changed without a record read (the clock ended requests)."""
        return bool(self._changed)

    # -- reading (UI thread) ----------------------------------------------------------
    def take_changes(self) -> Changes:
        count = len(self.items)
        changed: set[int] = set()
        queue = self._changed
        while queue:
            changed.add(queue.popleft())
        changes = Changes(count - self._rows_taken, frozenset(r for r in changed if r < count))
        self._rows_taken = count
        with self._lock:
            changes.findings = self._findings_changed
            self._findings_changed = False
        return changes

    @property
    def proxy_url(self) -> str | None:
        """Where clients reach an HTTP proxy: its address and the upstream's path."""
        if self.listening is None:
            return None
        target = self.header.target if self.header is not None else ""
        path = urlsplit(target).path if isinstance(target, str) else ""
        return f"http://{self.listening}{path or '/'}"

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def conversations(self) -> list[Conversation]:
        return list(self.analyzer.conversations.values())

    def summary(self) -> dict[str, Any]:
        """What the session declared: one dict per conversation, for a summary view."""
        header = self.header
        out: dict[str, Any] = {
            "file": str(self.path),
            "transport": header.transport if header else None,
            "target": header.target if header else None,
            "created": header.created if header else None,
            "records": self.records,
            "messages": self.messages,
            "flows": len(self.items),
            # a failed tool answers with a result: counted apart, like an HTTP 4xx/5xx
            "tool_errors": sum(item.flow.status == "tool-error" for item in self.items),
            "violations": len(self.findings),
            "ended": self.ended,
            "conversations": [],
        }
        for conversation in self.conversations:
            declared = conversation.declared
            out["conversations"].append(
                {
                    "key": conversation.key,
                    "era": declared.era,
                    "protocol_version": declared.protocol_version,
                    "client_info": declared.client_info,
                    "server_info": declared.server_info,
                    "client_capabilities": declared.client_capabilities,
                    "server_capabilities": declared.server_capabilities,
                    "tools": sorted(declared.tools),
                    "messages": conversation.message_count,
                }
            )
        return out
