"""Cache hint rules (modern era): ``ttlMs`` and ``cacheScope`` on cacheable results.

Since 2026-07-28 a server marks each cacheable result (discovery, the lists,
``resources/read``) with how long it may be reused (``ttlMs``, an integer
≥ 0) and by whom (``cacheScope``, ``public`` or ``private``). The pages of
one paginated list are one cacheable whole, so they share a scope: a chain
of pages is followed by its ``nextCursor`` and each page's scope compared
with the first page's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import msgspec

from mcpeek.inspector.analysis import Conversation
from mcpeek.inspector.analysis.peek import may_hold
from mcpeek.rules.base import MODERN_SPEC, Finding, Findings, Rule
from mcpeek.rules.context import MessageContext
from mcpeek.rules.families._bounded import MAX_KEYS, Lru, PerConversation
from mcpeek.rules.families._messages import id_text, is_complete, shown
from mcpeek.rules.families._server import request_cursor

CACHING = f"{MODERN_SPEC}/server/utilities/caching"

CACHEABLE = frozenset(
    {
        "server/discover",
        "tools/list",
        "prompts/list",
        "resources/list",
        "resources/templates/list",
        "resources/read",
    }
)
PAGINATED = frozenset({"tools/list", "prompts/list", "resources/list", "resources/templates/list"})


def _ttl_problem(result: dict[str, Any]) -> str | None:
    if "ttlMs" not in result:
        return "no ttlMs"
    ttl = result["ttlMs"]
    integral = (isinstance(ttl, int) and not isinstance(ttl, bool)) or (
        isinstance(ttl, float) and ttl.is_integer()
    )
    if not integral or ttl < 0:
        return f"ttlMs {shown(ttl, 40)} (must be an integer ≥ 0)"
    return None


def _scope_problem(result: dict[str, Any]) -> str | None:
    if "cacheScope" not in result:
        return "no cacheScope"
    scope = result["cacheScope"]
    if scope not in ("public", "private"):
        return f'cacheScope {shown(scope, 40)} (must be "public" or "private")'
    return None


class CacheFieldsMissing(Rule):
    id = "cache.fields-missing"
    gated = frozenset({"result"})
    severity = "error"
    era = "modern"
    summary = "a cacheable result without ttlMs (≥ 0) and cacheScope (public/private)"
    spec = f"{CACHING}#cacheable-results"
    kinds = frozenset({"result"})
    methods = CACHEABLE

    def on_message(self, ctx: MessageContext) -> Findings:
        result = ctx.result
        if ctx.entry.dir != "s2c" or not is_complete(result):
            return None
        problems = [p for p in (_ttl_problem(result), _scope_problem(result)) if p is not None]
        if not problems:
            return None
        also = [ctx.request.seq] if ctx.request is not None else []
        text = " and ".join(problems)
        return [ctx.finding(f"result for {ctx.method} (id {id_text(ctx)}) has {text}", also=also)]


class _ListChain(msgspec.Struct):
    scope: str | None
    seq: int


class CacheScopeChanged(Rule):
    id = "cache.scope-changed"
    severity = "error"
    era = "modern"
    summary = "pages of one paginated list with different cacheScope"
    spec = f"{CACHING}#interaction-with-pagination"
    kinds = frozenset({"result"})
    methods = PAGINATED
    directions: ClassVar[Mapping[str, str]] = {"result": "s2c"}

    def __init__(self) -> None:
        # (method, nextCursor) → the scope and seq of the list's first page with a scope
        self._chains: PerConversation[Lru[tuple[str, str], _ListChain]] = PerConversation(
            lambda: Lru(MAX_KEYS)
        )

    def on_message(self, ctx: MessageContext) -> Findings:
        if (
            ctx.conformant
            and not may_hold(ctx.entry.record, '"nextCursor"')
            and not isinstance(request_cursor(ctx), str)
        ):
            # A result the gate accepted is complete; one with no nextCursor that
            # answers a first page neither continues a chain nor starts one, so
            # there is nothing to decode (the state is touched as below).
            self._chains(ctx.conversation)
            return None
        result = ctx.result
        method = ctx.method
        if ctx.entry.dir != "s2c" or not is_complete(result) or method is None:
            return None
        scope = result.get("cacheScope")
        scope = scope if scope in ("public", "private") else None
        chains = self._chains(ctx.conversation)
        cursor = request_cursor(ctx)
        chain = chains.get((method, cursor)) if isinstance(cursor, str) else None
        findings: list[Finding] = []
        if chain is not None and chain.scope is not None and scope not in (None, chain.scope):
            findings.append(
                ctx.finding(
                    f"{method} page (id {id_text(ctx)}, cursor {shown(cursor, 40)}) has "
                    f'cacheScope "{scope}", the list\'s first page had "{chain.scope}"',
                    also=[chain.seq],
                )
            )
        if chain is None or chain.scope is None:
            chain = _ListChain(scope, ctx.seq)
        next_cursor = result.get("nextCursor")
        if isinstance(next_cursor, str):
            chains.put((method, next_cursor), chain)
        return findings

    def on_conversation_end(self, conversation: Conversation) -> Findings:
        self._chains.drop(conversation)
        return None
