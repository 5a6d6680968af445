"""The held-lines scan behind ``stdio.not-json`` and ``stdio.embedded-newline``.

Telling a split message from garbage needs the lines that follow, so a line
that could open one (it starts with ``{`` or ``[``) is held until the value
closes or the run breaks (a valid message in the same direction, the end of
the conversation, or the bounds below); only then is it reported, as part
of an ``embedded-newline`` or as ``not-json``. :class:`FramingScan` is the
base of both rules (:mod:`mcpeek.rules.families.framing`); each keeps the events that are its own.
"""

from __future__ import annotations

import json
import re
from typing import Literal

from mcpeek.inspector.analysis import Conversation
from mcpeek.rules.base import Finding, Findings, Rule
from mcpeek.rules.context import MessageContext

STREAM = {"c2s": "stdin", "s2c": "stdout"}
EXCERPT = 60
#: A run of held lines is given up (reported as not JSON) beyond these bounds.
RUN_LINES_LIMIT = 10_000
RUN_BYTES_LIMIT = 4 * 1024 * 1024

_SIGNIFICANT = re.compile(rb'[{}\[\]"\\]')
_OPEN = frozenset(b"{[")
_CLOSE = frozenset(b"}]")


def _excerpt(data: bytes) -> str:
    text = data.decode("utf-8", "replace").strip()
    return text if len(text) <= EXCERPT else text[: EXCERPT - 1] + "…"


class _Run:
    """Held lines of one direction that may be one message split by raw newlines.

    A light scan (brackets outside strings, strings allowed to span lines)
    says when the value that the first line opened closes; only then is the
    joined text decoded, once.
    """

    __slots__ = ("depth", "in_string", "lines", "size")

    def __init__(self) -> None:
        self.lines: list[tuple[int, bytes]] = []
        self.depth = 0
        self.in_string = False
        self.size = 0

    def feed(self, seq: int, data: bytes) -> Literal["open", "closed", "broken"]:
        self.lines.append((seq, data))
        self.size += len(data)
        skip = -1
        for match in _SIGNIFICANT.finditer(data):
            i = match.start()
            if i == skip:
                continue
            c = data[i]
            if self.in_string:
                if c == 0x5C:  # backslash: the next byte is escaped
                    skip = i + 1
                elif c == 0x22:
                    self.in_string = False
            elif c == 0x22:
                self.in_string = True
            elif c in _OPEN:
                self.depth += 1
            elif c in _CLOSE:
                self.depth -= 1
                if self.depth < 0:
                    return "broken"
        return "closed" if self.depth == 0 else "open"

    def joins(self) -> bool:
        """Whether the held lines, joined by the newlines that split them, are JSON."""
        text = b"\n".join(data for _, data in self.lines).decode("utf-8", "replace")
        try:
            json.loads(text, strict=False)  # raw newlines inside strings count too
        except ValueError:
            return False
        return True


Event = tuple[str, list[int], bytes]  # ("not-json" | "joined", seqs, first line)


class FramingScan(Rule):
    """The shared scan behind ``stdio.not-json`` and ``stdio.embedded-newline``.

    Each of the two rules runs it (on invalid lines only, which are rare)
    and keeps the events that are its own. State: the held lines of each
    direction, within :data:`RUN_LINES_LIMIT` / :data:`RUN_BYTES_LIMIT`.
    """

    transport = "stdio"
    # a valid message only flushes held lines: with none held, nothing to do
    idle_kinds = frozenset({"request", "notification", "result", "error"})

    report: str = ""

    def __init__(self) -> None:
        self._runs: dict[tuple[str, str], _Run] = {}
        self._fed_seq = -1

    def idle(self) -> bool:
        return not self._runs

    def on_message(self, ctx: MessageContext) -> Findings:
        entry = ctx.entry
        if entry.ch != "stdio":
            return None
        if entry.kind != "invalid":
            if not self._runs:
                return None  # the common case: no held lines to flush
            key = (ctx.conversation.key, entry.dir)
            return self._findings(self._flush(key), entry.dir)
        key = (ctx.conversation.key, entry.dir)
        problem = ctx.message.problem
        data = entry.wire()
        if problem == "not-json" and not data.strip():
            return None  # a blank line: stdio.blank-line's; it neither breaks nor joins a run
        if problem == "not-json":
            hold = not ctx.conversation.closed  # nothing may follow to complete it
            return self._findings(self._line(key, entry.seq, data, hold=hold), entry.dir)
        if problem == "not-object" and key in self._runs:
            # A scalar alone on a line (``1``, ``"x"``) inside a pretty-printed
            # message; an array of them is a batch of invalid members: fed once.
            if entry.seq == self._fed_seq:
                return None
            self._fed_seq = entry.seq
            return self._findings(self._line(key, entry.seq, data), entry.dir)
        return self._findings(self._flush(key), entry.dir) if self._runs else None

    def on_conversation_end(self, conversation: Conversation) -> Findings:
        findings: list[Finding] = []
        for direction in ("c2s", "s2c"):
            key = (conversation.key, direction)
            if key in self._runs:
                findings.extend(self._findings(self._flush(key), direction))
        return findings

    def _line(
        self, key: tuple[str, str], seq: int, data: bytes, *, hold: bool = True
    ) -> list[Event]:
        events: list[Event] = []
        run = self._runs.get(key)
        if run is not None:
            status = run.feed(seq, data)
            if status == "closed":
                if run.joins():
                    events.append(("joined", [s for s, _ in run.lines], run.lines[0][1]))
                    del self._runs[key]
                    return events
                return self._flush(key)
            if status == "open":
                if len(run.lines) > RUN_LINES_LIMIT or run.size > RUN_BYTES_LIMIT:
                    return self._flush(key)
                return events
            # broken: this line closes more than the run opened; the run was not
            # a message, and this line starts nothing
            run.lines.pop()
            events = self._flush(key)
            events.append(("not-json", [seq], data))
            return events
        if hold and data.lstrip()[:1] in (b"{", b"["):
            run = _Run()
            if run.feed(seq, data) == "open":
                self._runs[key] = run
                return events
        events.append(("not-json", [seq], data))
        return events

    def _flush(self, key: tuple[str, str]) -> list[Event]:
        run = self._runs.pop(key, None)
        if run is None:
            return []
        return [("not-json", [seq], data) for seq, data in run.lines]

    def _findings(self, events: list[Event], direction: str) -> list[Finding]:
        stream = STREAM.get(direction, direction)
        findings: list[Finding] = []
        for what, seqs, first in events:
            if what != self.report:
                continue
            if what == "joined":
                message = (
                    f"one message split over {len(seqs)} {stream} lines by raw newlines "
                    f"(valid JSON only when joined), starting `{_excerpt(first)}`"
                )
            else:
                message = f"{stream} line is not JSON: `{_excerpt(first)}`"
            findings.append(Finding(msgs=seqs, message=message))
        return findings
