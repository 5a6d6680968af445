"""Tool schema rules: arguments and ``structuredContent`` against the declared schemas.

A server declares its tools in ``tools/list``, each with an ``inputSchema``
and maybe an ``outputSchema``. A ``tools/call``'s arguments are validated
against the first (``tools.input-schema``: the server should have refused
them) and its result's ``structuredContent`` against the second
(``tools.output-schema``), with the bounded, offline checker of
:mod:`mcpeek.rules.families._toolschema`: an external ``$ref`` is never fetched, and without
``jsonschema`` installed both rules do nothing. The other tool rules (names,
order, ``x-mcp-header``) are in :mod:`mcpeek.rules.families.tools`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from mcpeek.inspector.analysis import Conversation, Entry
from mcpeek.rules.base import Findings, Rule
from mcpeek.rules.context import MessageContext
from mcpeek.rules.families._bounded import MAX_KEYS, Lru, PerConversation
from mcpeek.rules.families._messages import ListedNames, id_text, is_complete
from mcpeek.rules.families._toolschema import (
    MAX_SCHEMA_DEPTH,
    SchemaChecker,
    describe,
    risky_regex,
    schema_shape_problem,
)
from mcpeek.rules.families.tools import TOOLS

# Re-exported: the tests import these from here.
__all__ = ["MAX_SCHEMA_DEPTH", "SchemaChecker", "risky_regex", "schema_shape_problem"]


#: What each schema rule needs of a call (rules.facts): a listed tool with that schema.
INPUT_SCHEMA = frozenset({"input_schema"})
OUTPUT_SCHEMA = frozenset({"output_schema"})


class ListedTools:
    """Where each tool was declared last, per conversation (tool name → seq of its
    ``tools/list``): one table for both schema rules (:meth:`Rule.share`), filled once
    per list, by whichever of them hears it first."""

    def __init__(self) -> None:
        self.by_conversation: PerConversation[Lru[str, int]] = PerConversation(
            lambda: Lru(MAX_KEYS)
        )
        self._heard: Entry | None = None  # the last list remembered (a batch's members share a seq)
        self.names = ListedNames()

    def remember(self, ctx: MessageContext) -> None:
        if ctx.entry is self._heard:
            return  # the other schema rule remembered it already
        self._heard = ctx.entry
        names = self.names.of(ctx)
        if names is None:
            return
        self.by_conversation(ctx.conversation).put_all(names, ctx.seq)


class _SchemaRule(Rule):
    """Shared by the two schema rules: where each tool was declared, the validators."""

    def __init__(self) -> None:
        self.tools = ListedTools()
        self._listed = self.tools.by_conversation
        self.checker = SchemaChecker()

    def share(self, shared: dict[type, Any]) -> None:
        self.tools = shared.setdefault(ListedTools, self.tools)
        self.tools.names = shared.setdefault(ListedNames, self.tools.names)
        self._listed = self.tools.by_conversation

    def _remember_list(self, ctx: MessageContext) -> None:
        self.tools.remember(ctx)

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
    since = "2025-06-18"  # outputSchema and structuredContent first appear there
    kinds = frozenset({"result"})
    methods = frozenset({"tools/list", "tools/call"})
    directions: ClassVar[Mapping[str, str]] = {"result": "s2c"}

    @classmethod
    def facts_needed(
        cls, kind: str, method: str | None, era: str | None, direction: str
    ) -> frozenset[str]:
        return OUTPUT_SCHEMA if method == "tools/call" else frozenset()  # (see _schema)

    def on_message(self, ctx: MessageContext) -> Findings:
        if ctx.entry.dir != "s2c":
            return None
        if ctx.method == "tools/list":
            self._remember_list(ctx)
            return None
        # The declared schema first: most calls are of tools without an outputSchema,
        # whose results need no decode.
        found = self._schema(ctx, "outputSchema")
        if found is None:
            return None
        result = ctx.result
        if not is_complete(result) or result.get("isError") is True:
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
    directions: ClassVar[Mapping[str, str]] = {"request": "c2s", "result": "s2c"}
    # the calls' arguments are checked against what the lists declared
    kind_methods: ClassVar[Mapping[str, frozenset[str]]] = {
        "request": frozenset({"tools/call"}),
        "result": frozenset({"tools/list"}),
    }

    @classmethod
    def facts_needed(
        cls, kind: str, method: str | None, era: str | None, direction: str
    ) -> frozenset[str]:
        return INPUT_SCHEMA if kind == "request" else frozenset()  # (see _schema)

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
