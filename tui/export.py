"""A flow or a filtered session written out: as JSON for the clipboard, as a new capture.

Pure functions over the data model, used by the copy and save actions.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import msgspec

from mcpeek.inspector.capture.files import open_for_writing, write_all
from mcpeek.inspector.views.session import FlowItem, SessionModel


def flow_as_json(item: FlowItem) -> str:
    """The flow's messages as a JSON array (the exact values; bytes that are not JSON as text)."""
    out: list[Any] = []
    for entry in item.flow.entries:
        data = entry.wire()
        try:
            out.append(msgspec.json.decode(data))
        except msgspec.DecodeError:
            out.append(data.decode("utf-8", "replace"))
    return msgspec.json.format(msgspec.json.encode(out), indent=2).decode()


def save_capture(model: SessionModel, items: list[FlowItem], target: Path) -> int:
    """Write the records of ``items`` (messages, their HTTP exchanges, violations) as a
    new capture; raises ``CaptureFileError`` (with the reason) for a target that
    cannot be one, ``OSError`` when the system refuses."""
    records: dict[int, Any] = {}
    for item in items:
        for entry in item.flow.entries:
            records[entry.seq] = entry.record
            for http in model.exchanges.get(entry.ch, ()):
                records[http.seq] = http
        for finding in item.findings:
            if finding.seq:  # stored by the proxy (a re-check's findings have no place)
                records[finding.seq] = finding
    encoder = msgspec.json.Encoder()
    lines = [encoder.encode(model.header) + b"\n"] if model.header is not None else []
    lines += [encoder.encode(records[seq]) + b"\n" for seq in sorted(records)]
    # Opened as a proxy opens its capture: a new private file, never one that holds
    # data (a live capture among them), a symbolic link or another user's.
    fd = open_for_writing(target)
    try:
        write_all(fd, b"".join(lines))
    except OSError:
        os.close(fd)
        target.unlink(missing_ok=True)  # no half-written file left behind
        raise
    os.close(fd)
    return len(records)
