"""One capture read for the MCP server: flows numbered as the viewer does, lint's findings.

A :class:`Study` is built in one pass of the one capture loop
(:func:`~mcpeek.inspector.capture.run.run_capture`): the viewer's
:class:`~mcpeek.inspector.views.session.SessionModel` turns flows into rows
(the rows the filter language runs over), and a
:class:`~mcpeek.rules.engine.RuleEngine` beside it finds what ``mcpeek lint``
finds; those findings then replace the ones the capture stored, as the
viewer's re-check does. A capture still being written is read as ``lint`` and
``show`` read it at that moment, except that its calls still in flight stay
pending (:class:`_IntoModel`), and marked live.

:class:`Studies` keeps the last few, keyed by the file's size and time of
change, so that a client paging through one capture does not read it again
each call, while a capture that changed, or that a proxy is writing, is read
afresh.
"""

from __future__ import annotations

import os
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

from mcpeek.inspector.capture.files import being_written
from mcpeek.inspector.capture.reader import CaptureReader
from mcpeek.inspector.capture.run import run_capture
from mcpeek.inspector.records import Record
from mcpeek.inspector.views.session import SessionModel
from mcpeek.rules.engine import Reported, RuleEngine

KEPT = 8  # captures kept read: a client looks at a few at a time


@dataclass
class Study:
    """A capture as the server answers about it."""

    path: Path
    model: SessionModel
    found: list[Reported]  # what ``lint`` finds, in the order it finds it
    live: bool  # a proxy was still writing it when it was read
    problems: list[str]  # what the reader skipped or could not read (lint's notes)


class _IntoModel:
    """The model as :func:`run_capture`'s analysis, one record at a time.

    A capture still being written has not ended: at the end of what it holds so far
    its calls in flight stay ``pending`` (the analysis is not finished, which would
    declare them unanswered and end the conversation); only time passes, so that a
    request older than the timeout is declared unanswered, as the live checks do."""

    def __init__(self, model: SessionModel, *, live: bool) -> None:
        self._model = model
        self._live = live

    def feed(self, record: Record) -> None:
        self._model.feed((record,))

    def tick(self, now: float) -> None:
        self._model.analyzer.tick(now)

    def finish(self) -> None:
        if self._live:
            self._model.analyzer.tick(time.time())
        else:
            self._model.finish()


def study(path: Path) -> Study:
    """Read ``path`` once; raises ``CaptureError`` (or ``OSError``) when it cannot be read."""
    live = being_written(path)
    model = SessionModel(path)
    found: list[Reported] = []
    model.analyzer.listeners.append(RuleEngine(found.append))
    reader = CaptureReader(path)
    run_capture(reader, _IntoModel(model, live=live))
    model.set_findings(reported.record() for reported in found)
    return Study(path, model, found, live, reader.problems)


def file_stamp(path: Path) -> tuple[int, int]:
    """What changes when a capture grows: its size and time of change (``OSError``
    when it is gone)."""
    info = os.stat(path)
    return info.st_size, info.st_mtime_ns


class Studies:
    """The captures read lately, read again when their file changed."""

    def __init__(self, kept: int = KEPT) -> None:
        self._kept = kept
        self._lock = threading.Lock()  # tools may run in worker threads
        self._read: OrderedDict[Path, tuple[tuple[int, int], Study]] = OrderedDict()

    def get(self, path: Path) -> Study:
        stamp = file_stamp(path)
        with self._lock:
            held = self._read.get(path)
        # Unchanged and not live: a live capture is read afresh, as its clock runs (a
        # call in flight becomes unanswered) and its proxy may let go of it unwritten.
        if held is not None and held[0] == stamp and not held[1].live and not being_written(path):
            with self._lock:
                self._read.move_to_end(path)
            return held[1]
        fresh = study(path)
        with self._lock:
            self._read[path] = (stamp, fresh)
            self._read.move_to_end(path)
            while len(self._read) > self._kept:
                self._read.popitem(last=False)
        return fresh
