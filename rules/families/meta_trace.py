"""W3C trace context in ``_meta`` (modern): ``traceparent``, ``tracestate``, ``baggage``.

Their values follow the W3C Trace Context and Baggage formats.
"""

from __future__ import annotations

import re

from mcpeek.rules.base import MODERN_SPEC, Finding, Findings, Rule
from mcpeek.rules.context import MessageContext
from mcpeek.rules.families._server import shorten

BASIC = f"{MODERN_SPEC}/basic/index"


# -- W3C trace context --------------------------------------------------------------------
_HEX = "[0-9a-f]"


_TRACEPARENT_RE = re.compile(rf"({_HEX}{{2}})-({_HEX}{{32}})-({_HEX}{{16}})-({_HEX}{{2}})(-.*)?")


_TS_KEY = r"(?:[a-z0-9][a-z0-9_\-*/]{0,255}|[a-z0-9][a-z0-9_\-*/]{0,240}@[a-z][a-z0-9_\-*/]{0,13})"


_TS_VALUE = r"[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]"


_TS_MEMBER_RE = re.compile(rf"{_TS_KEY}={_TS_VALUE}")


_TOKEN = r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+"


_BAGGAGE_VALUE = r"[\x21\x23-\x2b\x2d-\x3a\x3c-\x5b\x5d-\x7e]*"


_OWS = r"[ \t]*"


_BAGGAGE_MEMBER_RE = re.compile(
    rf"{_OWS}{_TOKEN}{_OWS}={_OWS}{_BAGGAGE_VALUE}"
    rf"(?:{_OWS};{_OWS}{_TOKEN}(?:{_OWS}={_OWS}{_BAGGAGE_VALUE})?)*{_OWS}"
)


TRACESTATE_MAX = 32


BAGGAGE_MAX = 180


def traceparent_problem(value: str) -> str | None:
    match = _TRACEPARENT_RE.fullmatch(value)
    if match is None:
        return "not version-traceid-parentid-flags in lower-case hex (2-32-16-2)"
    version, trace_id, parent_id, _, rest = match.groups()
    if version == "ff":
        return "version ff is invalid"
    if version == "00" and rest is not None:
        return "version 00 has exactly four fields"
    if trace_id == "0" * 32:
        return "trace-id is all zeros"
    if parent_id == "0" * 16:
        return "parent-id is all zeros"
    return None


def tracestate_problem(value: str) -> str | None:
    members = [m.strip(" \t") for m in value.split(",")]
    members = [m for m in members if m]
    if len(members) > TRACESTATE_MAX:
        return f"{len(members)} list-members (at most {TRACESTATE_MAX})"
    for member in members:
        if not _TS_MEMBER_RE.fullmatch(member):
            return f"list-member {shorten(member)} is not key=value"
    return None


def baggage_problem(value: str) -> str | None:
    members = value.split(",")
    if len(members) > BAGGAGE_MAX:
        return f"{len(members)} list-members (at most {BAGGAGE_MAX})"
    for member in members:
        if not _BAGGAGE_MEMBER_RE.fullmatch(member):
            return f"list-member {shorten(member)} is not key=value[;property]"
    return None


TRACE_CHECKS = {
    "traceparent": traceparent_problem,
    "tracestate": tracestate_problem,
    "baggage": baggage_problem,
}


class TraceContext(Rule):
    id = "meta.trace-context"
    gated = frozenset({"request", "notification", "result"})
    severity = "error"
    era = "modern"
    summary = "`traceparent` / `tracestate` / `baggage` in `_meta` not in W3C format"
    spec = f"{BASIC}#meta"
    kinds = frozenset({"request", "notification", "result"})

    def on_message(self, ctx: MessageContext) -> Findings:
        wire = ctx.wire
        if (
            b'"traceparent"' not in wire
            and b'"tracestate"' not in wire
            and b'"baggage"' not in wire
        ):
            return None  # spares the decode
        meta = ctx.meta
        if meta is None:
            return None
        out: list[Finding] = []
        for key, check in TRACE_CHECKS.items():
            if key not in meta:
                continue
            value = meta[key]
            problem = check(value) if isinstance(value, str) else "not a string"
            if problem is not None:
                out.append(ctx.finding(f"_meta {key} {shorten(value)}: {problem}"))
        return out
