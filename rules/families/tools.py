"""Tool rules: names, ordering and ``x-mcp-header`` annotations of tools.

A server declares its tools in ``tools/list``. A tool's name is 1-128
characters of ``A-Za-z0-9_-.`` and unique in its list; two listings of the
same tools keep one order; and an ``x-mcp-header`` annotation must meet its
constraints or the tool is unusable. The rules that validate arguments and
``structuredContent`` against the declared schemas are in
:mod:`mcpeek.rules.families.tool_schemas`; the cache hint and resource rules that once lived
here are in :mod:`mcpeek.rules.families.cache` and :mod:`mcpeek.rules.families.resources`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, ClassVar

import msgspec

from mcpeek.inspector.analysis import Conversation
from mcpeek.inspector.analysis.peek import may_hold
from mcpeek.rules.base import MODERN_SPEC, Finding, Findings, Rule
from mcpeek.rules.context import MessageContext
from mcpeek.rules.families._bounded import MAX_CONVERSATIONS, MAX_KEYS, Lru, PerConversation
from mcpeek.rules.families._messages import (
    ListedNames,
    id_text,
    listed_tools,
    request_params,
    shown,
    summarized,
)
from mcpeek.rules.families._server import request_cursor
from mcpeek.rules.families._toolschema import (
    MAX_SCHEMA_DEPTH,
    SchemaChecker,
    header_annotations,
    risky_regex,
    schema_shape_problem,
)

# Re-exported: the tests import these from here (the schema ones from before
# the schema rules moved to mcpeek.rules.families.tool_schemas).
__all__ = [
    "MAX_CONVERSATIONS",
    "MAX_SCHEMA_DEPTH",
    "Lru",
    "SchemaChecker",
    "header_annotations",
    "request_params",
    "risky_regex",
    "schema_shape_problem",
    "shown",
]

TOOLS = f"{MODERN_SPEC}/server/tools"


class _ReportedOnce(Rule):
    """A rule on the tools of a ``tools/list`` result that reports each problem once
    per conversation: ``_judge`` gets the tools and the problems reported so far."""

    kinds = frozenset({"result"})
    methods = frozenset({"tools/list"})
    directions: ClassVar[Mapping[str, str]] = {"result": "s2c"}

    def __init__(self) -> None:
        super().__init__()  # (a rule may also be a _NamesRule)
        self._reported: PerConversation[Lru[str, None]] = PerConversation(lambda: Lru(MAX_KEYS))

    def on_message(self, ctx: MessageContext) -> Findings:
        tools = listed_tools(ctx)
        if ctx.entry.dir != "s2c" or tools is None:
            return None
        return self._judge(ctx, tools, self._reported(ctx.conversation))

    def _judge(self, ctx: MessageContext, tools: list[Any], reported: Lru[str, None]) -> Findings:
        raise NotImplementedError

    @staticmethod
    def _first_time(reported: Lru[str, None], problem: str) -> bool:
        """Whether ``problem`` is new to ``reported`` (it is remembered from now on)."""
        if problem in reported:
            return False
        reported.put(problem, None)
        return True

    def on_conversation_end(self, conversation: Conversation) -> Findings:
        self._reported.drop(conversation)
        return None


class _NamesRule(Rule):
    """Base: a rule on the names a server's ``tools/list`` result lists, read once for
    every such rule (:class:`ListedNames`, which the engine's rules share)."""

    def __init__(self) -> None:
        super().__init__()
        self.names = ListedNames()

    def share(self, shared: dict[type, Any]) -> None:
        self.names = shared.setdefault(ListedNames, self.names)

    def server_names(self, ctx: MessageContext) -> tuple[str, ...] | None:
        """The result's tool names; ``None`` when it is no server's list of tools."""
        names = self.names.of(ctx)
        return names if ctx.entry.dir == "s2c" else None


_NAME = re.compile(r"[A-Za-z0-9_.\-]{1,128}")
#: Names joined by newlines (a character no sound name has), each of them sound.
_SOUND_NAMES = re.compile(r"[A-Za-z0-9_.\-]{1,128}(?:\n[A-Za-z0-9_.\-]{1,128})*")


def name_problem(name: Any) -> str | None:
    if not isinstance(name, str):
        return None  # not a string: for the schema rules
    if not name:
        return "empty tool name"
    if len(name) > 128:
        return f"tool name {shown(name[:40] + '…')} is {len(name)} characters long (max 128)"
    if not _NAME.fullmatch(name):
        bad = sorted({c for c in name if not re.fullmatch(r"[A-Za-z0-9_.\-]", c)})
        chars = ", ".join(shown(c) for c in bad[:5])
        return f"tool name {shown(name, 60)} has characters outside A-Za-z0-9_-. ({chars})"
    return None


def all_sound(names: tuple[str, ...]) -> bool:
    """Whether no name has a problem (:func:`name_problem`) and none appears twice: the
    usual list, told in a few calls over all the names instead of a few per name. (Only
    as many newlines as separators: no name holds one, so each line is a whole name.)"""
    if not names:
        return True
    text = "\n".join(names)
    return (
        text.count("\n") == len(names) - 1
        and _SOUND_NAMES.fullmatch(text) is not None
        and len(set(names)) == len(names)
    )


class ToolsNameFormat(_ReportedOnce, _NamesRule):
    id = "tools.name-format"
    severity = "warning"
    summary = "a tool name outside 1-128 chars of A-Za-z0-9_-. or duplicated in one list"
    spec = f"{TOOLS}#tool-names"

    def on_message(self, ctx: MessageContext) -> Findings:
        names = self.server_names(ctx)
        if names is None:
            return None
        reported = self._reported(ctx.conversation)  # (first: it keeps the conversation's)
        if all_sound(names):
            return None
        problems: list[str] = []
        seen: set[str] = set()
        for name in names:  # (a tool without a string name has no problem here)
            problem = name_problem(name)
            if problem is None and name in seen:
                problem = f"tool name {shown(name, 60)} appears more than once in this list"
            seen.add(name)
            if problem is not None and self._first_time(reported, problem):
                problems.append(problem)
        if not problems:
            return None
        return [ctx.finding(f"tools/list (id {id_text(ctx)}): {summarized(problems)}")]


class _Listing(msgspec.Struct):
    same_set: int  # hash of the sorted names
    order: int  # hash of the names in order
    seq: int
    count: int


class ToolsOrderUnstable(_NamesRule):
    id = "tools.order-unstable"
    severity = "warning"
    era = "modern"
    summary = "two tools/list results with the same tools in a different order"
    spec = f"{TOOLS}#capabilities"
    kinds = frozenset({"result"})
    methods = frozenset({"tools/list"})
    directions: ClassVar[Mapping[str, str]] = {"result": "s2c"}

    def __init__(self) -> None:
        super().__init__()
        self._listings: PerConversation[Lru[str | None, _Listing]] = PerConversation(
            lambda: Lru(64)
        )

    def on_message(self, ctx: MessageContext) -> Findings:
        names = self.server_names(ctx)
        if names is None:
            return None
        cursor = request_cursor(ctx)
        page = cursor if isinstance(cursor, str) else None
        listing = _Listing(hash(tuple(sorted(names))), hash(names), ctx.seq, len(names))
        listings = self._listings(ctx.conversation)
        before = listings.get(page)
        listings.put(page, listing)
        if before is None or before.same_set != listing.same_set or before.order == listing.order:
            return None
        where = "" if page is None else f" (page {shown(page, 40)})"
        return [
            ctx.finding(
                f"tools/list (id {id_text(ctx)}){where} returned the same {len(names)} tools as "
                "the previous listing in a different order",
                also=[before.seq],
            )
        ]

    def on_conversation_end(self, conversation: Conversation) -> Findings:
        self._listings.drop(conversation)
        return None


class ToolsXMcpHeader(_ReportedOnce):
    id = "tools.x-mcp-header"
    severity = "error"
    era = "modern"
    summary = "an x-mcp-header annotation that breaks its constraints"
    spec = f"{TOOLS}#x-mcp-header"

    def _judge(self, ctx: MessageContext, tools: list[Any], reported: Lru[str, None]) -> Findings:
        if not may_hold(ctx.entry.record, "x-mcp-header"):
            return None  # the common case: no annotation to walk the schemas for
        findings: list[Finding] = []
        for tool in tools:
            if not isinstance(tool, dict):
                continue
            annotations = header_annotations(tool.get("inputSchema"))
            bad = [a for a in annotations or () if a.problems]
            if not bad:
                continue
            parts = [
                f"x-mcp-header {shown(a.name, 40)} at {a.where} {', '.join(a.problems)}"
                for a in bad
            ]
            text = f"tool {shown(tool.get('name'), 60)}: " + summarized(parts)
            if self._first_time(reported, text):
                findings.append(ctx.finding(text + " (clients MUST exclude this tool)"))
        return findings
