"""``inspector.load(path)``: a whole capture, correlated, for users' scripts and tests.

    capture = inspector.load("capture.jsonl")
    for flow in capture.flows:
        print(flow.number, flow.method, flow.status, flow.latency_ms)
    capture.conversations[0].era           # "modern" / "legacy"
    capture.messages[0].message().params_value()

Loading keeps everything in memory, compactly: each message is an
:class:`~mcpeek.inspector.analysis.Entry` that points at its record and is decoded
again only when asked.
"""

from __future__ import annotations

import os
from pathlib import Path

from mcpeek.inspector.analysis import AnalysisListener, Analyzer, Conversation, Entry, Flow
from mcpeek.inspector.analysis.analyzer import DEFAULT_TIMEOUT
from mcpeek.inspector.capture.reader import CaptureReader
from mcpeek.inspector.capture.run import run_capture
from mcpeek.inspector.gctune import fewer_collections
from mcpeek.inspector.records import AnyRecord, Header


class _Collector(AnalysisListener):
    def __init__(self) -> None:
        self.messages: list[Entry] = []

    def on_message(self, entry: Entry, flow: Flow, conversation: Conversation) -> None:
        self.messages.append(entry)


class Capture:
    def __init__(
        self,
        path: Path,
        header: Header,
        records: list[AnyRecord],
        analyzer: Analyzer,
        messages: list[Entry],
        problems: list[str],
    ) -> None:
        self.path = path
        self.header = header
        self.records = records
        self.messages = messages
        self.problems = problems
        self.conversations: list[Conversation] = list(analyzer.conversations.values())
        self.flows: list[Flow] = analyzer.flows or []

    def __repr__(self) -> str:
        return (
            f"<Capture {self.path.name}: {len(self.messages)} messages, "
            f"{len(self.flows)} flows, {len(self.conversations)} conversations>"
        )

    def flow(self, number: int) -> Flow:
        return self.flows[number - 1]


def load(path: str | os.PathLike[str], *, timeout: float = DEFAULT_TIMEOUT) -> Capture:
    """Read and correlate a capture; raises ``CaptureError`` if it cannot be read."""
    reader = CaptureReader(path)
    collector = _Collector()
    analyzer = Analyzer([collector], timeout=timeout, keep_flows=True)
    records: list[AnyRecord] = []
    with fewer_collections():
        run_capture(reader, analyzer, each=records.append)
    assert reader.header is not None  # run_capture raises CaptureError otherwise
    return Capture(
        Path(path), reader.header, records, analyzer, collector.messages, reader.problems
    )
