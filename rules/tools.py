"""Tool rules: schemas, names, ordering and ``x-mcp-header`` annotations of tools.

A server declares its tools in ``tools/list``. Their arguments
(``inputSchema``) and ``structuredContent`` (``outputSchema``) are validated
against the declared schemas with the bounded, offline checker of
:mod:`rules._toolschema` (without ``jsonschema`` installed those two rules
do nothing). A tool's name is 1-128 characters of ``A-Za-z0-9_-.`` and
unique in its list; two listings of the same tools keep one order; and an
``x-mcp-header`` annotation must meet its constraints or the tool is
unusable. The cache hint and resource rules that once lived here are in
:mod:`rules.cache` and :mod:`rules.resources`.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec

from inspector.analysis import Conversation
from rules._bounded import MAX_CONVERSATIONS, MAX_KEYS, Lru, PerConversation
from rules._messages import (
    id_text,
    is_complete,
    listed_tools,
    request_params,
    shown,
    summarized,
)
from rules._toolschema import (
    MAX_SCHEMA_DEPTH,
    SchemaChecker,
    describe,
    header_annotations,
    risky_regex,
    schema_shape_problem,
)
from rules.base import MODERN_SPEC, Finding, Findings, Rule
from rules.context import MessageContext

# Re-exported: the tests import these from here.
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


class _SchemaRule(Rule):
    """Shared by the two schema rules: where each tool was declared, the validators."""

    def __init__(self) -> None:
        # tool name → seq of the tools/list that declared it last
        self._listed: PerConversation[Lru[str, int]] = PerConversation(lambda: Lru(MAX_KEYS))
        self.checker = SchemaChecker()

    def _remember_list(self, ctx: MessageContext) -> None:
        tools = listed_tools(ctx)
        if tools is None:
            return
        listed = self._listed(ctx.conversation)
        for tool in tools:
            if isinstance(tool, dict) and isinstance(tool.get("name"), str):
                listed.put(tool["name"], ctx.seq)

    def _schema(
        self, ctx: MessageContext, keyword: str
    ) -> tuple[str, dict[str, Any], list[int]] | None:
        """The called tool's name, its schema ``keyword`` (``inputSchema``…) and the seq
        of the list that declared it; ``None`` without a declared tool or schema."""
        name = ctx.flow.name
        if name is None:
            return None
        tool = ctx.conversation.declared.tools.get(name)
        if not isinstance(tool, dict):
            return None
        schema = tool.get(keyword)
        if not isinstance(schema, dict):
            return None
        state = self._listed.peek(ctx.conversation)
        listed = state.get(name) if state is not None else None
        return name, schema, [listed] if listed is not None else []

    @staticmethod
    def _unfetched(what: str, keyword: str, ref: str, instance: str) -> str:
        """The message for an instance not judged because its schema has an external $ref."""
        return (
            f"{what}: {keyword} refers to {ref}, an external $ref that "
            f"is never fetched, so {instance} cannot be validated"
        )

    def on_conversation_end(self, conversation: Conversation) -> Findings:
        self._listed.drop(conversation)
        return None


class ToolsOutputSchema(_SchemaRule):
    id = "tools.output-schema"
    severity = "error"
    summary = "structuredContent that does not validate against the tool's outputSchema"
    spec = f"{TOOLS}#output-schema"
    kinds = frozenset({"result"})
    methods = frozenset({"tools/list", "tools/call"})

    def on_message(self, ctx: MessageContext) -> Findings:
        if ctx.entry.dir != "s2c":
            return None
        if ctx.method == "tools/list":
            self._remember_list(ctx)
            return None
        result = ctx.result
        if not is_complete(result) or result.get("isError") is True:
            return None
        found = self._schema(ctx, "outputSchema")
        if found is None:
            return None
        name, schema, also = found
        if ctx.request is not None:
            also.append(ctx.request.seq)
        what = f"result of {name} (id {id_text(ctx)})"
        if "structuredContent" not in result:
            if not self.checker.available():
                return None
            return [
                ctx.finding(
                    f"{what} has no structuredContent although the tool declares an outputSchema",
                    also=also,
                )
            ]
        outcome = self.checker.check(
            ctx.conversation.key, name, schema, result["structuredContent"], "structuredContent"
        )
        if outcome is None:
            return None
        if outcome.unresolved is not None:
            return [
                ctx.finding(
                    self._unfetched(what, "outputSchema", outcome.unresolved, "structuredContent"),
                    also=also,
                    severity="warning",
                )
            ]
        if not outcome.errors:
            return None
        return [
            ctx.finding(f"{what} does not match its outputSchema: {describe(outcome)}", also=also)
        ]


class ToolsInputSchema(_SchemaRule):
    id = "tools.input-schema"
    severity = "info"
    summary = "tools/call arguments that do not validate against the tool's inputSchema"
    spec = f"{TOOLS}#tool"
    methods = frozenset({"tools/list", "tools/call"})
    kinds = frozenset({"request", "result"})

    def on_message(self, ctx: MessageContext) -> Findings:
        if ctx.kind == "result":
            if ctx.method == "tools/list" and ctx.entry.dir == "s2c":
                self._remember_list(ctx)
            return None
        if ctx.entry.dir != "c2s" or ctx.method != "tools/call":
            return None
        if ctx.flow.attempts and ctx.flow.attempts[0].request is not ctx.entry:
            return None  # a retry of an input_required call repeats the same arguments
        found = self._schema(ctx, "inputSchema")
        if found is None:
            return None
        name, schema, also = found
        params = ctx.params if isinstance(ctx.params, dict) else {}
        arguments = params.get("arguments", {})
        outcome = self.checker.check(ctx.conversation.key, name, schema, arguments, "arguments")
        if outcome is None:
            return None
        what = f"tools/call {name} (id {id_text(ctx)})"
        if outcome.unresolved is not None:
            return [
                ctx.finding(
                    self._unfetched(what, "inputSchema", outcome.unresolved, "the arguments"),
                    also=also,
                )
            ]
        if not outcome.errors:
            return None
        return [
            ctx.finding(
                f"{what} arguments do not match the inputSchema (the server should answer "
                f"with an error): {describe(outcome)}",
                also=also,
            )
        ]


class _ReportedOnce(Rule):
    """A rule on the tools of a ``tools/list`` result that reports each problem once
    per conversation: ``_judge`` gets the tools and the problems reported so far."""

    kinds = frozenset({"result"})
    methods = frozenset({"tools/list"})

    def __init__(self) -> None:
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


_NAME = re.compile(r"[A-Za-z0-9_.\-]{1,128}")


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


class ToolsNameFormat(_ReportedOnce):
    id = "tools.name-format"
    severity = "warning"
    summary = "a tool name outside 1-128 chars of A-Za-z0-9_-. or duplicated in one list"
    spec = f"{TOOLS}#tool-names"

    def _judge(self, ctx: MessageContext, tools: list[Any], reported: Lru[str, None]) -> Findings:
        problems: list[str] = []
        seen: set[str] = set()
        for tool in tools:
            name = tool.get("name") if isinstance(tool, dict) else None
            problem = name_problem(name)
            if problem is None and isinstance(name, str) and name in seen:
                problem = f"tool name {shown(name, 60)} appears more than once in this list"
            if isinstance(name, str):
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


class ToolsOrderUnstable(Rule):
    id = "tools.order-unstable"
    severity = "warning"
    era = "modern"
    summary = "two tools/list results with the same tools in a different order"
    spec = f"{TOOLS}#capabilities"
    kinds = frozenset({"result"})
    methods = frozenset({"tools/list"})

    def __init__(self) -> None:
        self._listings: PerConversation[Lru[str | None, _Listing]] = PerConversation(
            lambda: Lru(64)
        )

    def on_message(self, ctx: MessageContext) -> Findings:
        tools = listed_tools(ctx)
        if ctx.entry.dir != "s2c" or tools is None:
            return None
        names = tuple(
            t["name"] for t in tools if isinstance(t, dict) and isinstance(t.get("name"), str)
        )
        cursor = request_params(ctx).get("cursor")
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
