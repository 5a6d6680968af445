"""What the MCP server's tools answer, built from a :class:`Study`.

The flows are the objects ``mcpeek show --format json`` prints
(:func:`~mcpeek.inspector.views.flowline.flow_json`) and the violations the
objects ``mcpeek lint --format json`` prints
(:func:`~mcpeek.inspector.views.findings.lint_json`), with a few fields
added for a reader who cannot run the CLI (how many violations a flow has,
the rule's explanation). Message bodies are the bytes the capture holds,
which a recording redacted: nothing here can show more than the file does.
"""

from __future__ import annotations

import inspect
import time
from collections import Counter
from typing import Any

import msgspec

from mcpeek import rules
from mcpeek.inspector.analysis import Entry
from mcpeek.inspector.assist.study import Study
from mcpeek.inspector.records import Http, Violation, wire_bytes
from mcpeek.inspector.views.findings import lint_json
from mcpeek.inspector.views.flowline import flow_json
from mcpeek.inspector.views.session import FlowItem
from mcpeek.rules.base import listed_era
from mcpeek.rules.engine import Reported

#: Bytes of one message body given in full; a longer one is cut, with a note.
BODY_LIMIT = 16_384
SEVERITIES = ("error", "warning", "info")


def iso(t: float | None) -> str | None:
    """A capture time (seconds since the epoch) as ISO 8601 UTC, to the millisecond."""
    if t is None:
        return None
    try:
        return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int(t % 1 * 1000):03d}Z"
    except (OverflowError, OSError, ValueError):  # a capture's t is data, not a promise
        return None


def capture_summary(name: str, found: Study) -> dict[str, Any]:
    """One line of ``list_captures``."""
    model = found.model
    header = model.header
    eras = sorted({c.declared.era for c in model.conversations if c.declared.era})
    times = [entry.t for item in model.items for entry in item.flow.entries]
    start = min(times) if times else None
    severities = Counter(v.severity for v in found.found)
    return {
        "name": name,
        "path": str(found.path),
        "target": header.target if header else None,
        "transport": header.transport if header else None,
        "era": eras[0] if len(eras) == 1 else ("mixed" if eras else None),
        "created": header.created if header else None,
        "start": iso(start),
        "duration_s": None if start is None else round(max(times) - start, 3),
        "messages": model.messages,
        "flows": len(model.items),
        "violations": {s: severities.get(s, 0) for s in SEVERITIES},
        "live": found.live,
        "problems": list(found.problems),
    }


def flow_row(item: FlowItem) -> dict[str, Any]:
    """One flow as ``show --format json`` prints it, plus its violations' count and worst."""
    row: dict[str, Any] = msgspec.to_builtins(flow_json(item.flow))
    row["violations"] = len(item.findings)
    row["worst"] = item.worst
    return row


def explanation(rule_id: str) -> dict[str, Any]:
    """What the catalog says of a rule: severity, era, summary, explanation, spec URL."""
    cls = rules.catalog().get(rule_id)
    if cls is None:
        return {"id": rule_id, "known": False}
    own = cls.__dict__.get("__doc__")
    return {
        "id": rule_id,
        "known": True,
        "severity": cls.severity,
        "era": listed_era(cls),
        "summary": cls.summary,
        "explanation": inspect.cleandoc(own) if own else cls.summary,
        "spec": cls.spec,
    }


def finding_detail(file: str, finding: Reported | Violation) -> dict[str, Any]:
    """A violation as ``lint --format json`` gives it, with the rule's explanation."""
    out = lint_json(file, finding)
    about = explanation(finding.rule)
    out["explanation"] = about.get("explanation", "an internal finding of mcpeek")
    return out


def message_detail(entry: Entry, exchanges: dict[str, list[Http]]) -> dict[str, Any]:
    """One message: direction, time, its raw JSON (cut when long) and, on HTTP, its exchange."""
    data = wire_bytes(entry.record)
    shown = data[:BODY_LIMIT]
    out: dict[str, Any] = {
        "seq": entry.seq,
        "dir": entry.dir,
        "t": entry.t,
        "time": iso(entry.t),
        "kind": entry.kind,
        "method": entry.method,
        "id": None if entry.id is msgspec.UNSET else entry.id,  # a notification has none
        "bytes": len(data),
        "raw": shown.decode("utf-8", "replace"),
        "cut": len(data) > BODY_LIMIT,
    }
    if out["cut"]:
        out["note"] = f"cut at {BODY_LIMIT} of {len(data)} bytes"
    if entry.ch != "stdio" and entry.ch in exchanges:
        out["http"] = exchange_detail(exchanges[entry.ch])
    return out


def exchange_detail(records: list[Http]) -> dict[str, Any]:
    """The HTTP exchange a message crossed in, headers as recorded (redacted ones stay so)."""
    out: dict[str, Any] = {"exchange": records[0].x}
    for record in records:
        if record.phase == "request":
            out.update(method=record.method, path=record.path, request_headers=record.headers)
        elif record.phase == "response":
            out.update(status=record.status, response_headers=record.headers)
    return out


def flow_detail(name: str, found: Study, item: FlowItem) -> dict[str, Any]:
    """``get_flow``: the flow's line, every message, and its violations explained."""
    file = str(found.path)
    exchanges = found.model.exchanges
    return {
        "capture": name,
        "flow": flow_row(item),
        "messages": [message_detail(entry, exchanges) for entry in item.flow.entries],
        "violations": [finding_detail(file, v) for v in item.findings],
    }
