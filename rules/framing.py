"""stdio framing rules: one valid JSON-RPC message per line, and who may send what.

They look only at stdio traffic (``entry.ch == "stdio"``). An invalid line
is reported once, by the most specific rule: a blank line is
``stdio.blank-line``, a line that is not UTF-8 is ``stdio.not-utf8``, lines
that only make sense together (a message with raw newlines inside) are one
``stdio.embedded-newline``, and the rest of what is not JSON is
``stdio.not-json``. Valid JSON that is no JSON-RPC message is the envelope
family's (``jsonrpc.not-object``, ``jsonrpc.shape``).

Telling a split message from garbage needs the lines that follow, so a line
that could open one (it starts with ``{`` or ``[``) is held until the value
closes or the run breaks (a valid message in the same direction, the end of
the conversation, or the bounds below); only then is it reported, as part
of an ``embedded-newline`` or as ``not-json``.
"""

from __future__ import annotations

import json
import re
from typing import Literal

from inspector.analysis import Conversation
from rules.base import LEGACY_SPEC, MODERN_SPEC, Finding, Findings, Rule
from rules.context import MessageContext
from rules.envelope import is_notification_method, show

#: The framing bullets of the stdio transport. The 2026-07-28 stdio page
#: states them in its untitled opening list (no heading to link to); the
#: 2025-11-25 page has the same bullets under "## stdio".
STDIO_FRAMING = f"{LEGACY_SPEC}/basic/transports#stdio"
STDIO = f"{MODERN_SPEC}/basic/transports/stdio"
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


class _Framing(Rule):
    """The shared scan behind ``stdio.not-json`` and ``stdio.embedded-newline``.

    Each of the two rules runs it (on invalid lines only, which are rare)
    and keeps the events that are its own. State: the held lines of each
    direction, within :data:`RUN_LINES_LIMIT` / :data:`RUN_BYTES_LIMIT`.
    """

    transport = "stdio"

    report: str = ""

    def __init__(self) -> None:
        self._runs: dict[tuple[str, str], _Run] = {}
        self._fed_seq = -1

    def on_message(self, ctx: MessageContext) -> Findings:
        entry = ctx.entry
        if entry.ch != "stdio":
            return None
        key = (ctx.conversation.key, entry.dir)
        if entry.kind != "invalid":
            return self._findings(self._flush(key), entry.dir) if self._runs else None
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


class StdioNotJson(_Framing):
    id = "stdio.not-json"
    severity = "error"
    summary = "a line on the server's stdout or stdin that is not valid JSON"
    spec = STDIO_FRAMING
    report = "not-json"


class StdioEmbeddedNewline(_Framing):
    id = "stdio.embedded-newline"
    severity = "error"
    summary = "consecutive lines invalid alone but valid JSON when joined (raw newlines)"
    spec = STDIO_FRAMING
    report = "joined"


class StdioNotUtf8(Rule):
    """A line whose bytes are not UTF-8.

    The capture says it directly: a line is kept as ``raw`` text when it is
    UTF-8 and as ``raw_b64`` when not. That also catches a line the decoders
    accept because the bad bytes sit in a member they skip.
    """

    transport = "stdio"

    id = "stdio.not-utf8"
    severity = "error"
    summary = "a line that is not valid UTF-8"
    spec = f"{MODERN_SPEC}/basic/transports#messages"

    def __init__(self) -> None:
        self._last_seq = -1  # the members of a batch share their seq: report it once

    def on_message(self, ctx: MessageContext) -> Findings:
        record = ctx.entry.record
        if record.raw is not None or ctx.entry.ch != "stdio" or ctx.seq == self._last_seq:
            return None
        self._last_seq = ctx.seq
        data = ctx.wire
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as exc:
            stream = STREAM.get(ctx.entry.dir, ctx.entry.dir)
            bad = data[exc.start : exc.start + 4]
            return [
                ctx.finding(
                    f"{stream} line is not valid UTF-8 (byte {exc.start}: {bad!r}, {exc.reason})"
                )
            ]
        return None


class StdioBlankLine(Rule):
    transport = "stdio"
    id = "stdio.blank-line"
    severity = "error"
    summary = "an empty or whitespace-only line"
    spec = STDIO_FRAMING
    kinds = frozenset({"invalid"})

    def on_message(self, ctx: MessageContext) -> Findings:
        if ctx.entry.ch != "stdio" or ctx.wire.strip():
            return None
        stream = STREAM.get(ctx.entry.dir, ctx.entry.dir)
        what = "an empty line" if not ctx.wire else "a whitespace-only line"
        return [ctx.finding(f"{what} on {stream} (not an MCP message)")]


class StdioServerRequest(Rule):
    transport = "stdio"
    id = "stdio.server-request"
    severity = "error"
    era = "modern"
    summary = "the server wrote a JSON-RPC request to stdout"
    spec = f"{STDIO}#receiving-messages"
    kinds = frozenset({"request"})

    def on_message(self, ctx: MessageContext) -> Findings:
        entry = ctx.entry
        if entry.ch != "stdio" or entry.dir != "s2c":
            return None
        if is_notification_method(entry.method):
            return None  # a notification with an id: notification.with-id's
        return [
            ctx.finding(
                f"the server sent a {entry.method} request (id {show(entry.id)}); modern "
                "servers ask for input with an input_required result"
            )
        ]


class StdioClientResponse(Rule):
    transport = "stdio"
    id = "stdio.client-response"
    severity = "error"
    era = "modern"
    summary = "the client wrote a JSON-RPC response to stdin"
    spec = f"{STDIO}#sending-messages"
    kinds = frozenset({"result", "error"})

    def on_message(self, ctx: MessageContext) -> Findings:
        entry = ctx.entry
        if entry.ch != "stdio" or entry.dir != "c2s":
            return None
        request = ctx.request
        about = f" to {request.method}" if request is not None and request.method else ""
        return [
            ctx.finding(
                f"the client sent {'a result' if entry.kind == 'result' else 'an error'}"
                f"{about} (id {show(entry.id)}); clients MUST NOT write responses",
                also=[request.seq] if request is not None else [],
            )
        ]
