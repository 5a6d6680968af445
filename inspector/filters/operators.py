"""The ``~x`` operators of the flow filter language, one small class each.

Defining a class registers it (see :mod:`mcpeek.inspector.filters.base`); the order
here is the order of the help screen. The shapes several share (a regex over a
field, a choice of fixed words, a flag) are in :mod:`~mcpeek.inspector.filters.shapes`.
Conventions shared by all of them:

- a REGEX argument is searched, not anchored (``^…$`` anchors it), and
  ignores case; a flow without the field (no method, no name, no latency, no
  comment) never matches;
- fixed-word arguments (statuses, directions, eras, severities) ignore case.
"""

from __future__ import annotations

import math
import re

from mcpeek.inspector.analysis.flow import Flow
from mcpeek.inspector.filters.base import BadArgument, Memo, Namespace, Operator, is_plain
from mcpeek.inspector.filters.shapes import FieldChoice, FieldRegex, Flag, RegexOperator
from mcpeek.inspector.records import Msg, Violation, wire_bytes

STATUSES = (
    "pending",
    "input_required",
    "complete",
    "error",
    "tool-error",
    "cancelled",
    "unanswered",
    "closed",
    "by-proxy",
    "undecoded",
    "orphan",
    "notification",
)
STATUS_ALIASES = {"ok": "complete"}
KNOWN_STATUSES = " ".join((*STATUSES, *STATUS_ALIASES))
SEVERITIES = ("info", "warning", "error")  # lowest first
COMPARISON = re.compile(r"(>=|<=|>|<)\s*(\d+(?:\.\d*)?|\.\d+)\s*(ms|s)?", re.IGNORECASE)


def _decoded(record: Msg) -> str:
    """The text of a message that is not UTF-8 (``raw_b64``), for searching."""
    return wire_bytes(record).decode("utf-8", "replace")


class Method(FieldRegex):
    code = "m"
    help = "method matches"
    example = "~m tools/call"
    field = "flow.method"


class Name(FieldRegex):
    code = "n"
    help = "tool, prompt or resource name (resource URI) matches"
    example = "~n get_weather"
    field = "flow.name"


class Status(FieldChoice):
    code = "s"
    arg = "STATUS[|STATUS...]"
    help = "status is one of (" + " ".join(STATUSES) + "; ok means complete)"
    example = "~s error|input_required|unanswered"
    field = "flow.status"
    choices = STATUSES
    aliases = STATUS_ALIASES
    alternatives = True

    def unknown(self, part: str) -> BadArgument:
        return BadArgument(f"unknown status {part!r} for ~s", f"; known: {KNOWN_STATUSES}")


class Violations(Operator):
    code = "v"
    arg = "[error|warning|info]"
    choices = SEVERITIES
    help = "has a violation (at or above the severity, if given)"
    example = "~v warning"

    def setup(self, arg: str | None) -> None:
        rank = SEVERITIES.index(arg.lower()) if arg is not None else 0
        self.severities = frozenset(SEVERITIES[rank:])

    def expression(self, ns: Namespace) -> str:
        if len(self.severities) == len(SEVERITIES):
            return "item.worst is not None"
        # an unknown severity ranks as info (SessionModel does the same)
        return f"item.worst in {ns.add(self.severities)}"


class Rule(RegexOperator):
    code = "r"
    help = "has a violation whose rule id matches"
    example = "~r result.result-type-missing"

    def expression(self, ns: Namespace) -> str:
        search = self.regex.search
        memo = Memo(lambda value: search(value) is not None)

        def rule(findings: list[Violation]) -> bool:
            return any(memo[finding.rule] for finding in findings)

        return f"(item.findings and {ns.add(rule)}(item.findings))"


class Latency(Operator):
    code = "t"
    arg = ">TIME|<TIME"
    help = "latency (first request to last response) compares: ms or s, ms by default"
    example = "~t >100ms"

    def setup(self, arg: str | None) -> None:
        found = COMPARISON.fullmatch((arg or "").strip())
        if found is None:
            raise BadArgument("~t wants a comparison like >100ms, <5ms or >1.5s", f"; got {arg!r}")
        op, number, unit = found.groups()
        limit = float(number) * (1000.0 if (unit or "ms").lower() == "s" else 1.0)
        if not math.isfinite(limit):
            raise BadArgument("~t wants a finite time", f"; got {arg!r}")
        self.op, self.limit = op, limit

    def expression(self, ns: Namespace) -> str:
        op = {">": ">", ">=": ">=", "<": "<", "<=": "<="}[self.op]  # never user text
        return f"((_ms := flow.latency_ms) is not None and _ms {op} {ns.add(self.limit)})"


class Body(RegexOperator):
    """Searches each message's text as it crossed the wire, JSON undecoded.

    So ``~b café`` finds ``café`` but not ``caf\\u00e9``. A message that is
    not UTF-8 is searched as decoded with replacement characters.
    """

    code = "b"
    help = "the bytes of any message of the flow contain (plain text or regex, any case)"
    example = '~b "temperature"'

    def expression(self, ns: Namespace) -> str:
        pattern = self.regex.pattern
        search = self.regex.search
        if is_plain(pattern) and pattern.lower() == pattern.upper():
            # no regex syntax, no letters: a plain substring test does it
            def hit(record: Msg) -> bool:
                raw = record.raw
                return pattern in (_decoded(record) if raw is None else raw)
        elif is_plain(pattern) and pattern.isascii():
            lowered = pattern.lower()

            def hit(record: Msg) -> bool:
                raw = record.raw
                return lowered in (_decoded(record) if raw is None else raw).lower()
        else:

            def hit(record: Msg) -> bool:
                raw = record.raw
                return search(_decoded(record) if raw is None else raw) is not None

        def body(flow: Flow) -> bool:
            for attempt in flow.attempts:
                if hit(attempt.request.record):
                    return True
                if attempt.response is not None and hit(attempt.response.record):
                    return True
                for entry in attempt.duplicates:
                    if hit(entry.record):
                        return True
            for entry in flow.notifications:
                if hit(entry.record):
                    return True
            cancel, orphan = flow.cancel, flow.orphan
            if cancel is not None and hit(cancel.record):
                return True
            return orphan is not None and hit(orphan.record)

        return f"{ns.add(body)}(flow)"


class Direction(FieldChoice):
    code = "d"
    arg = "c2s|s2c"
    help = "who sent the flow's first message: c2s (the client) or s2c (the server)"
    example = "~d s2c"
    field = "flow.sender"
    choices = ("c2s", "s2c")


class Kind(FieldChoice):
    code = "k"
    arg = "KIND[|KIND...]"
    help = (
        "the kind (request, response or notification) of the message being acted on "
        "(--fault); in the flow list, the kind of the flow's first message"
    )
    example = "~k response"
    field = "item.message_kind"
    choices = ("request", "response", "notification")
    alternatives = True


class Id(Operator):
    code = "id"
    arg = "ID"
    help = "a JSON-RPC id of the flow (any attempt) is this number or string"
    example = "~id 42"

    def setup(self, arg: str | None) -> None:
        self.text = arg or ""
        self.number: float | None = None
        try:
            self.number = int(self.text)
        except ValueError:
            try:
                number = float(self.text)
            except ValueError:
                return
            if math.isfinite(number):
                self.number = number

    def expression(self, ns: Namespace) -> str:
        text, number = self.text, self.number

        def same(rid: object) -> bool:
            kind = rid.__class__
            if kind is str:
                return rid == text
            return (kind is int or kind is float) and number is not None and rid == number

        def ids(flow: Flow) -> bool:
            if flow.orphan is not None:
                return same(flow.orphan.id)
            for attempt in flow.attempts:  # noqa: SIM110 (a generator per row costs more)
                if same(attempt.request.id):
                    return True
            return False

        return f"{ns.add(ids)}(flow)"


class Marked(Flag):
    code = "mark"
    help = "marked by the user"
    example = "~mark"
    test = "item.marked"


class Comment(FieldRegex):
    code = "c"
    help = "the user's comment matches"
    example = "~c flaky"
    field = "item.comment"


class Progress(Flag):
    code = "p"
    help = "received at least one progress notification"
    example = "~p"
    test = "flow.progress_count > 0"


class Era(FieldChoice):
    code = "e"
    arg = "modern|legacy"
    help = "the protocol era of the flow (2026-07-28 stateless, or initialize)"
    example = "~e legacy"
    field = "flow.era"
    choices = ("modern", "legacy")


class All(Flag):
    code = "a"
    help = "every flow"
    example = "~a"
    test = "True"
