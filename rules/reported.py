"""The one shape a violation has from the engine on, and the one line a live flag is.

:class:`Reported` is what :class:`~mcpeek.rules.engine.RuleEngine` hands to its
``report`` callback: the capture's ``violation`` record (:meth:`Reported.record`)
plus the context ``lint``, the live flags and the pytest plugin print.
"""

from __future__ import annotations

from typing import Any

import msgspec

from mcpeek.inspector.analysis import Entry, Flow
from mcpeek.inspector.records import Http, Msg, Record, Violation, wire_start

RULE_CRASHED = "inspector.rule-crashed"
GATE_UNSOUND = "inspector.gate-unsound"
CRASH_SPEC = ""  # an internal finding: no spec section to point at
EXCERPT = 240
SHOWN_ID_BRACKETS = 100  # an id (a JSON array or object) with more is not carried in reports


class Reported(msgspec.Struct):
    """A violation as the engine reports it: the one shape a finding has until it is
    written down. It carries the capture's ``violation`` record (:meth:`record`) plus
    the context ``lint``, the live flags and the pytest plugin print; the live-checks
    worker sends it as it is, and the viewer and the proxy keep its :meth:`record`.
    """

    rule: str
    severity: str
    msgs: list[int]
    message: str
    spec: str
    era: str | None = None
    method: str | None = None
    msg_id: Any = None  # the JSON-RPC id of the offending message, when it has one
    excerpt: str = ""
    conversation: str = ""
    # The offending message is mcpeek's (an edit, an answer in place, a corruption):
    # shown, never blamed on a peer.
    made: str | None = None

    def record(self) -> Violation:
        """The capture's ``violation`` record of this finding (the context stays out:
        the capture holds the messages it came from)."""
        return Violation(
            rule=self.rule,
            severity=self.severity,
            msgs=self.msgs,
            message=self.message,
            spec=self.spec,
            made=self.made,
        )


def crash_report(who: str, exc: Exception, conversation: str, seq: int) -> Reported:
    """The ``inspector.rule-crashed`` finding for a rule (or the state rules share)
    that raised on message or record ``seq`` (0: none in particular)."""
    return Reported(
        rule=RULE_CRASHED,
        severity="error",
        msgs=[seq] if seq else [],
        message=f"rule {who} raised {type(exc).__name__}: {exc}",
        spec=CRASH_SPEC,
        conversation=conversation,
    )


def flag_line(v: Reported) -> str:
    """The one-line live flag: ``ERROR rule method id N: message  <spec>``."""
    parts = [v.severity.upper(), v.rule]
    if v.method:
        parts.append(v.method)
    if v.msg_id is not None:
        parts.append(f"id {msgspec.json.encode(v.msg_id).decode()}")
    line = " ".join(parts) + f": {v.message}"
    return f"{line}  {v.spec}" if v.spec else line


def shown_id(value: Any) -> Any:
    """The id a report carries: one nested too deep for an encoder to write is left out."""
    if not isinstance(value, (list, dict)):
        return value
    try:
        text = msgspec.json.encode(value)
    except RecursionError:
        return None
    return value if text.count(b"[") + text.count(b"{") <= SHOWN_ID_BRACKETS else None


def excerpt(entry: Entry) -> str:
    """The start of a message's text, as a report shows it."""
    # Each character decodes alone (a lone surrogate's bytes too): one more than the
    # excerpt shows tells that it is cut, and where.
    text = wire_start(entry.record, EXCERPT + 1).decode("utf-8", "replace")
    return text if len(text) <= EXCERPT else text[: EXCERPT - 1] + "…"


def made_note(made: str) -> str:
    """What a finding on a message mcpeek made says about it."""
    return f"[mcpeek's doing ({made}: --fault, -s or --intercept), not the peer's]"


def version_era(version: str | None) -> str | None:
    if version is None:
        return None
    return "modern" if version >= "2026-07-28" else "legacy"


def finding_direction(msgs: list[int], entries: list[Entry], record: Record | None) -> str | None:
    """Which way a finding's latest message the engine knows of went (one of the hook's
    ``entries``, or the ``record`` of an ``on_record`` hook): the offending one, or (an
    HTTP status finding names the response record last) the message just before it."""
    for seq in reversed(msgs):
        for entry in entries:
            if entry.seq == seq:
                return entry.dir
        if record is not None and getattr(record, "seq", None) == seq:
            if isinstance(record, Msg):
                return record.dir
            if isinstance(record, Http):
                return {"request": "c2s", "response": "s2c"}.get(record.phase)
    return None


def offender(msgs: list[int], entries: list[Entry]) -> Entry | None:
    """The entry a finding blames: the last of ``msgs``, if among ``entries``."""
    if msgs:
        seq = msgs[-1]
        for entry in entries:
            if entry.seq == seq:
                return entry
    return None


def blamed(
    msgs: list[int], entries: list[Entry], record: Record | None
) -> tuple[str | None, Entry | None]:
    """A finding's direction (:func:`finding_direction`) and the entry it blames
    (:func:`offender`). The common case, a finding on the hook's one message, takes
    no loop."""
    if len(entries) == 1 and msgs and entries[0].seq == msgs[-1]:
        entry = entries[0]
        return entry.dir, entry
    return finding_direction(msgs, entries, record), offender(msgs, entries)


def offended(entry: Entry | None, current: Flow | None) -> tuple[str, str | None, Any]:
    """What a report shows of the entry it blames: its excerpt, its method (a
    response's: that of ``current``, the flow being judged, when it is the entry's)
    and its shown id; nothing for no entry."""
    if entry is None:
        return "", None, None
    method = entry.method
    if method is None and current is not None and current.number == entry.flow:
        method = current.method  # a response: its request's method
    msg_id = None if entry.id is msgspec.UNSET else shown_id(entry.id)
    return excerpt(entry), method, msg_id
