"""A flow or a filtered session written out: as JSON for the clipboard, as a new capture.

Pure functions over the data model, used by the copy and save actions.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

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
    """Write the records of ``items`` (messages, their HTTP exchanges, violations) as a capture."""
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
    tmp = target.with_name(target.name + ".part")
    try:
        with open(tmp, "wb") as out:
            if model.header is not None:
                out.write(encoder.encode(model.header) + b"\n")
            for seq in sorted(records):
                out.write(encoder.encode(records[seq]) + b"\n")
        tmp.replace(target)
    except OSError:
        tmp.unlink(missing_ok=True)  # no half-written file left behind
        raise
    return len(records)
