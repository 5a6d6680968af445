"""stdio framing rules: one valid JSON-RPC message per line, and who may send what.

They look only at stdio traffic (``entry.ch == "stdio"``). An invalid line
is reported once, by the most specific rule: a blank line is
``stdio.blank-line``, a line that is not UTF-8 is ``stdio.not-utf8``, lines
that only make sense together (a message with raw newlines inside) are one
``stdio.embedded-newline``, and the rest of what is not JSON is
``stdio.not-json``. Valid JSON that is no JSON-RPC message is the envelope
family's (``jsonrpc.not-object``, ``jsonrpc.shape``).

Telling a split message from garbage needs the lines that follow: the scan
that holds a line which could open one, until it closes or the run breaks,
is :mod:`mcpeek.rules.families._stdio_runs`'s.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from mcpeek.rules.base import LEGACY_SPEC, MODERN_SPEC, Findings, Rule
from mcpeek.rules.context import MessageContext
from mcpeek.rules.families._stdio_runs import (
    EXCERPT,
    RUN_BYTES_LIMIT,
    RUN_LINES_LIMIT,
    STREAM,
    FramingScan,
)
from mcpeek.rules.families.envelope import is_notification_method, show

# Re-exported: defined here before the scan moved to mcpeek.rules.families._stdio_runs (the tests
# import RUN_LINES_LIMIT from here).
__all__ = ["EXCERPT", "RUN_BYTES_LIMIT", "RUN_LINES_LIMIT", "STREAM"]

#: The framing bullets of the stdio transport. The 2026-07-28 stdio page
#: states them in its untitled opening list (no heading to link to); the
#: 2025-11-25 page has the same bullets under "## stdio".
STDIO_FRAMING = f"{LEGACY_SPEC}/basic/transports#stdio"
STDIO = f"{MODERN_SPEC}/basic/transports/stdio"


class StdioNotJson(FramingScan):
    id = "stdio.not-json"
    severity = "error"
    summary = "a line on the server's stdout or stdin that is not valid JSON"
    spec = STDIO_FRAMING
    report = "not-json"


class StdioEmbeddedNewline(FramingScan):
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
    gated = frozenset({"request", "notification", "result", "error"})  # the gate reads text only
    envelope_gated = gated  # (so does the envelope check)
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
    directions: ClassVar[Mapping[str, str]] = {"request": "s2c"}  # the client's are fine

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
    gated = frozenset({"result", "error"})
    severity = "error"
    era = "modern"
    summary = "the client wrote a JSON-RPC response to stdin"
    spec = f"{STDIO}#sending-messages"
    kinds = frozenset({"result", "error"})
    # (the server's answers are what it should see: not called on them at all)
    directions: ClassVar[Mapping[str, str]] = {"result": "c2s", "error": "c2s"}

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
