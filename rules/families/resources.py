"""Resource rules: a read of an unknown URI is an error, not an empty result.

A server answers ``resources/read`` of a resource it does not have with an
error (``-32602``, ``-32002`` before 2026-07-28), never with an empty
``contents`` array. Which URIs exist is inferred from what the server
itself said: ``resources/list`` results, templates, update notifications and
the resource links and embedded resources of tool results and prompts. Only
after a list was seen, and only while the set stays small, is an empty read
of a URI outside it reported. The server can also say it itself: an empty read
of a URI that it later answers with a not-found error (``-32602``, or
``-32002``) is reported then, whatever was listed.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from mcpeek.inspector.analysis import Conversation
from mcpeek.inspector.analysis.peek import may_hold
from mcpeek.rules.base import MODERN_SPEC, Finding, Findings, Rule
from mcpeek.rules.context import RESULT_BIT, MessageContext
from mcpeek.rules.families._bounded import MAX_KEYS, Lru, PerConversation
from mcpeek.rules.families._messages import as_list, id_text, request_params, shown

RESOURCES = f"{MODERN_SPEC}/server/resources"
#: Results that only teach URIs through the resources they link or embed.
LINKING = frozenset({"tools/call", "prompts/get"})
NOT_FOUND = (-32602, -32002)  # resource not found: 2026-07-28, and before it


class _Known:
    """The URIs and URI templates a conversation's server has shown."""

    __slots__ = ("empty_reads", "listed", "overflow", "templates", "uris")

    def __init__(self) -> None:
        self.uris: set[str] = set()
        self.templates: dict[str, re.Pattern[str]] = {}
        self.listed = False  # a resources/list result was seen
        self.overflow = False  # too many URIs to remember: no inference any more
        # URI → (request seq, result seq) of an empty read not reported (yet)
        self.empty_reads: Lru[str, tuple[int, int]] = Lru(MAX_KEYS)

    def add(self, uri: Any) -> None:
        if not isinstance(uri, str) or self.overflow:
            return
        if len(self.uris) >= MAX_KEYS * 4:
            self.overflow = True
            self.uris.clear()
            return
        self.uris.add(uri)

    def add_template(self, template: Any) -> None:
        if not isinstance(template, str) or template in self.templates or len(template) > 2048:
            return
        if len(self.templates) >= MAX_KEYS:
            self.overflow = True
            return
        parts = re.split(r"\{[^{}]*\}", template)
        self.templates[template] = re.compile(".*".join(re.escape(p) for p in parts), re.DOTALL)

    def knows(self, uri: str) -> bool:
        return uri in self.uris or any(t.fullmatch(uri) for t in self.templates.values())


def _content_uris(items: Any) -> Iterator[Any]:
    """URIs of resource links and embedded resources in a content list."""
    if not isinstance(items, list):
        return
    for item in items:
        if not isinstance(item, dict):
            continue
        yield item.get("uri")
        resource = item.get("resource")
        if isinstance(resource, dict):
            yield resource.get("uri")


class ResourcesEmptyNotFound(Rule):
    id = "resources.empty-not-found"
    severity = "warning"
    summary = "resources/read of an unknown URI answered with an empty contents array"
    spec = f"{RESOURCES}#error-handling"
    methods = frozenset(
        {
            "resources/list",
            "resources/templates/list",
            "resources/read",
            "tools/call",
            "prompts/get",
            "notifications/resources/updated",
        }
    )
    kinds = frozenset({"result", "error", "notification"})

    def __init__(self) -> None:
        self._known: PerConversation[_Known] = PerConversation(_Known)

    def on_message(self, ctx: MessageContext) -> Findings:
        if ctx.entry.dir != "s2c":
            return None
        method = ctx.method
        if ctx.kind == "error":
            return self._not_found(ctx) if method == "resources/read" else None
        # (first, on every message it is called on: it keeps this conversation among those
        # remembered, which a fact that skipped the results without links would change)
        known = self._known(ctx.conversation)
        if ctx.kind == "notification":
            params = ctx.params
            if isinstance(params, dict):
                known.add(params.get("uri"))
            return None
        if (
            method in LINKING
            and not ctx.computed & RESULT_BIT  # (no rule has decoded it)
            and not may_hold(ctx.entry.record, '"uri"')
        ):
            return None  # no resource link nor embedded resource: nothing to decode
        result = ctx.result
        if not isinstance(result, dict):
            return None
        if method == "resources/list":
            known.listed = True
            for resource in as_list(result.get("resources")):
                if isinstance(resource, dict):
                    known.add(resource.get("uri"))
        elif method == "resources/templates/list":
            for template in as_list(result.get("resourceTemplates")):
                if isinstance(template, dict):
                    known.add_template(template.get("uriTemplate"))
        elif method == "tools/call":
            for uri in _content_uris(result.get("content")):
                known.add(uri)
        elif method == "prompts/get":
            for message in as_list(result.get("messages")):
                if isinstance(message, dict):
                    for uri in _content_uris([message.get("content")]):
                        known.add(uri)
        elif method == "resources/read":
            return self._read(ctx, known, result)
        return None

    def _read(self, ctx: MessageContext, known: _Known, result: dict[str, Any]) -> Findings:
        contents = result.get("contents")
        uri = request_params(ctx).get("uri")
        if contents != [] or not isinstance(uri, str):
            for item in contents if isinstance(contents, list) else ():
                if isinstance(item, dict):
                    known.add(item.get("uri"))
            return None
        if ctx.request is None or known.knows(uri):
            return None
        if not known.listed or known.overflow:
            known.empty_reads.put(uri, (ctx.request.seq, ctx.seq))  # evidence may come
            return None
        code = "-32602" if ctx.era == "modern" else "-32002"
        return [
            ctx.finding(
                f"resources/read of {shown(uri, 80)} (id {id_text(ctx)}) returned an empty "
                "contents array, and the URI is in no resources/list result nor template seen "
                f"(a missing resource is answered with error {code})",
                also=[ctx.request.seq],
            )
        ]

    def _not_found(self, ctx: MessageContext) -> Findings:
        """A not-found error for a URI the server earlier read as empty: that read was wrong."""
        known = self._known.peek(ctx.conversation)
        if known is None or not known.empty_reads:
            return None  # no empty read to blame: the error need not be decoded
        error = ctx.error
        code = error.get("code") if isinstance(error, dict) else None
        if code not in NOT_FOUND:
            return None
        uri = request_params(ctx).get("uri")
        earlier = known.empty_reads.pop(uri, None) if isinstance(uri, str) else None
        if earlier is None:
            return None
        request_seq, empty_seq = earlier
        return [
            Finding(
                msgs=[ctx.seq, request_seq, empty_seq],
                message=f"resources/read of {shown(uri, 80)} returned an empty contents array, "
                f"but the server later answered a read of it with error {code} (id "
                f"{id_text(ctx)}): a missing resource is answered with an error, not an "
                "empty result",
            )
        ]

    def on_conversation_end(self, conversation: Conversation) -> Findings:
        self._known.drop(conversation)
        return None
