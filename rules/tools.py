"""Tools, caching and resources rules: schemas, names, ordering, cache hints, not-found reads.

The JSON Schema checks (``tools.output-schema``, ``tools.input-schema``) use
the ``jsonschema`` library, imported lazily: without it they do nothing.
Schemas come from the server, so they are treated as hostile (2026-07-28
"JSON Schema Usage"): a ``$ref`` is never fetched (the registry refuses every
URI it does not hold, so an external ``$ref`` fails with a clear message), a
schema deeper or larger than :data:`MAX_SCHEMA_DEPTH` / :data:`MAX_SUBSCHEMAS`
is not compiled (no finding; the reason is kept in ``SchemaChecker.skipped``),
a ``pattern`` that looks catastrophic (a quantified group that itself holds a
quantifier or an alternation) or a string longer than
:data:`MAX_PATTERN_INPUT` is not matched, one validation may take at most
:data:`MAX_STEPS` subschema applications (a ``$ref`` fan-out is small but
exponential; past the budget the instance is not judged), compiled validators
are cached per (conversation, tool, schema hash), and at most
:data:`MAX_ERRORS` errors are reported per instance.
"""

from __future__ import annotations

import hashlib
import importlib
import re
from collections import OrderedDict
from collections.abc import Callable, Iterator
from itertools import islice
from typing import Any, Generic, TypeVar

import msgspec

from inspector.analysis import Conversation, Entry
from inspector.jsonrpc import MessageDecoder
from rules.base import MODERN_SPEC, Finding, Findings, Rule
from rules.context import MessageContext

TOOLS = f"{MODERN_SPEC}/server/tools"
CACHING = f"{MODERN_SPEC}/server/utilities/caching"
RESOURCES = f"{MODERN_SPEC}/server/resources"

MAX_SCHEMA_DEPTH = 64  # JSON nesting levels of a schema
MAX_SUBSCHEMAS = 10_000  # objects and arrays in a schema
MAX_ERRORS = 5  # validation errors reported per instance
MAX_VALIDATORS = 128  # compiled validators kept per rule
MAX_PATTERN_INPUT = 10_000  # longest string a `pattern` is matched against
MAX_STEPS = 50_000  # subschema applications one validation may take ($ref fan-out, big arrays)
REF_COST = 32  # a reference costs many applications (it is resolved each time, and slowly)
REFS = frozenset({"$ref", "$dynamicRef", "$recursiveRef"})
#: keywords that apply subschemas: the ones a validation's cost grows with
APPLICATORS = frozenset(
    {
        "allOf",
        "anyOf",
        "oneOf",
        "not",
        "if",
        "dependentSchemas",
        "dependencies",
        "items",
        "prefixItems",
        "additionalItems",
        "contains",
        "unevaluatedItems",
        "properties",
        "patternProperties",
        "additionalProperties",
        "unevaluatedProperties",
        "propertyNames",
        "extends",
    }
)
MAX_CONVERSATIONS = 256  # conversations a rule keeps state for
MAX_KEYS = 4096  # names, cursors or URIs a rule keeps per conversation
MAX_SHOWN = 5  # problems listed in one finding
EXCERPT = 120

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

K = TypeVar("K")
V = TypeVar("V")


class Lru(OrderedDict[K, V]):
    """A dict that forgets its oldest entries beyond ``limit``."""

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.limit = limit

    def put(self, key: K, value: V) -> None:
        self[key] = value
        self.move_to_end(key)
        while len(self) > self.limit:
            self.popitem(last=False)


class PerConversation(Generic[V]):
    """Per-conversation state, bounded in the number of conversations."""

    def __init__(self, factory: Callable[[], V], limit: int = MAX_CONVERSATIONS) -> None:
        self._factory = factory
        self._states: Lru[str, V] = Lru(limit)

    def __call__(self, conversation: Conversation) -> V:
        state = self._states.get(conversation.key)
        if state is None:
            state = self._factory()
        self._states.put(conversation.key, state)
        return state

    def peek(self, conversation: Conversation) -> V | None:
        return self._states.get(conversation.key)

    def drop(self, conversation: Conversation) -> None:
        self._states.pop(conversation.key, None)


def shown(value: Any, limit: int = EXCERPT) -> str:
    """A short JSON rendering of a value for a message."""
    try:
        text = msgspec.json.encode(value).decode()
    except (TypeError, msgspec.EncodeError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def request_params(entry: Entry | None, decoder: MessageDecoder) -> dict[str, Any]:
    """The params of a request entry as a dict (``{}`` when absent or not an object)."""
    if entry is None:
        return {}
    params = entry.message(decoder).params_value()
    return params if isinstance(params, dict) else {}


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def id_text(ctx: MessageContext) -> str:
    return shown(ctx.entry.id, 40)


def is_complete(result: Any) -> bool:
    """A result that is not an interim ``input_required`` one."""
    return isinstance(result, dict) and result.get("resultType") != "input_required"


# ---------------------------------------------------------------------------------------------
# JSON Schema validation, bounded and offline
# ---------------------------------------------------------------------------------------------


def schema_shape_problem(schema: Any) -> str | None:
    """Why a schema is too big to compile (depth, size), or ``None``. Iterative, stops early."""
    stack: list[tuple[Any, int]] = [(schema, 1)]
    count = 0
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            children: Any = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        count += 1
        if depth > MAX_SCHEMA_DEPTH:
            return f"schema nested deeper than {MAX_SCHEMA_DEPTH} levels"
        if count > MAX_SUBSCHEMAS:
            return f"schema has more than {MAX_SUBSCHEMAS} subschemas"
        for child in children:
            if isinstance(child, (dict, list)):
                stack.append((child, depth + 1))
    return None


def risky_regex(pattern: str) -> bool:
    """A pattern with a quantified group that holds a quantifier or an alternation
    (``(a+)+``, ``(a|aa)*``): the shape of catastrophic backtracking."""
    stack = [False]
    i, n = 0, len(pattern)
    in_class = False
    while i < n:
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
        elif c == "(":
            stack.append(False)
        elif c == ")":
            inner = stack.pop() if len(stack) > 1 else False
            nxt = pattern[i + 1] if i + 1 < n else ""
            if nxt in ("+", "*", "{"):
                if inner:
                    return True
                stack[-1] = True
            elif inner:
                stack[-1] = True
        elif c in "+*|{":
            stack[-1] = True
        i += 1
    return False


def _refuse_retrieval(uri: str) -> Any:
    from referencing.exceptions import NoSuchResource

    raise NoSuchResource(ref=uri)  # type: ignore[call-arg]


class _OverBudget(Exception):
    """A validation took more steps than :data:`MAX_STEPS`."""


class Outcome(msgspec.Struct):
    """The result of validating one instance."""

    errors: list[str]
    more: bool = False
    unresolved: str | None = None  # an external $ref that was refused


class SchemaChecker:
    """Compiles and caches validators for server-provided schemas; never touches the network."""

    def __init__(self) -> None:
        self._module: Any = None
        self._loaded = False
        self._validators: Lru[tuple[str, str, str], Any] = Lru(MAX_VALIDATORS)
        self._digests: Lru[tuple[str, str], tuple[Any, str]] = Lru(MAX_VALIDATORS)
        self._guarded: dict[Any, Any] = {}
        self._risky: Lru[str, bool] = Lru(1024)
        self._steps = MAX_STEPS
        self._meta: dict[Any, Any] = {}  # base class → a guarded validator of its metaschema
        #: schemas not compiled, and why (no finding is reported for them)
        self.skipped: Lru[tuple[str, str, str], str] = Lru(MAX_VALIDATORS)

    def available(self) -> bool:
        if not self._loaded:
            self._loaded = True
            try:
                self._module = importlib.import_module("jsonschema.validators")
                importlib.import_module("referencing")
            except ImportError:
                self._module = None
        return self._module is not None

    @staticmethod
    def _digest(schema: Any) -> str:
        data = msgspec.json.encode(schema, order="deterministic")
        return hashlib.sha256(data).hexdigest()[:32]

    def validator(self, conversation: str, tool: str, schema: Any) -> Any:
        """The compiled validator for a schema, or ``None`` (not compilable: see ``skipped``)."""
        if not self.available() or not isinstance(schema, dict):
            return None
        memo = self._digests.get((conversation, tool))
        if memo is not None and memo[0] is schema:
            digest = memo[1]
        else:
            # the size bounds first: a hostile schema is never encoded, hashed nor compiled
            problem = schema_shape_problem(schema)
            digest = "refused" if problem is not None else self._digest(schema)
            self._digests.put((conversation, tool), (schema, digest))
            if problem is not None:
                self.skipped.put((conversation, tool, digest), problem)
                self._validators.put((conversation, tool, digest), None)
        key = (conversation, tool, digest)
        if key in self._validators:
            self._validators.move_to_end(key)
            return self._validators[key]
        reason, compiled = self._compile(schema)
        if reason is not None:
            self.skipped.put(key, reason)
        self._validators.put(key, compiled)
        return compiled

    def _compile(self, schema: dict[str, Any]) -> tuple[str | None, Any]:
        validators = self._module
        if "$schema" in schema:
            dialect = schema["$schema"]
            base = (
                validators.validator_for(schema, default=None) if isinstance(dialect, str) else None
            )
            if base is None:
                return f"unsupported JSON Schema dialect {shown(dialect, 60)}", None
        else:
            base = validators.Draft202012Validator
        if any(self._is_risky(p) for p in _pattern_property_keys(schema)):
            return "a patternProperties regex risks catastrophic backtracking", None
        problem = self._schema_problem(base, schema)
        if problem is not None:
            return problem, None
        try:
            return None, self._guard(base)(schema, registry=self._registry())
        except Exception as exc:
            return f"schema does not compile: {exc}", None

    @staticmethod
    def _registry() -> Any:
        from referencing import Registry

        return Registry(retrieve=_refuse_retrieval)  # type: ignore[call-arg]

    def _schema_problem(self, base: Any, schema: dict[str, Any]) -> str | None:
        """A structural ``check_schema`` within the step budget.

        The 2019-09 and 2020-12 metaschemas are spread over vocabularies joined by
        ``$dynamicRef``: applying them takes seconds on a large schema, and outside any
        budget (each vocabulary names its ``$schema``, so jsonschema switches to its own
        validator class). Those dialects are checked against the draft-07 metaschema
        instead, which catches the same malformed keywords (a ``type`` that is no type,
        a ``required`` that is no array…) and ignores the newer ones. The metaschema's
        root loses its ``$schema``/``$id`` so that its ``#`` references stay budgeted.
        """
        meta = self._meta.get(base)
        if meta is None:
            validators = self._module
            older = (
                validators.Draft3Validator,
                validators.Draft4Validator,
                validators.Draft6Validator,
                validators.Draft7Validator,
            )
            meta_base = base if base in older else validators.Draft7Validator
            root = {
                k: v for k, v in meta_base.META_SCHEMA.items() if k not in ("$schema", "$id", "id")
            }
            meta = self._guard(meta_base)(
                root, format_checker=meta_base.FORMAT_CHECKER, registry=self._registry()
            )
            self._meta[base] = meta
        self._steps = MAX_STEPS
        try:
            error = next(iter(meta.iter_errors(schema)), None)
        except _OverBudget:
            return f"schema too costly to check (more than {MAX_STEPS} steps)"
        except Exception as exc:
            return f"schema cannot be checked: {exc}"
        if error is not None:
            return f"invalid schema: {getattr(error, 'message', error)}"
        return None

    def _is_risky(self, pattern: str) -> bool:
        risky = self._risky.get(pattern)
        if risky is None:
            risky = risky_regex(pattern)
            self._risky.put(pattern, risky)
        return risky

    def _guard(self, base: Any) -> Any:
        """``base`` whose applicators count against the step budget, and whose ``pattern``
        skips risky regexes and huge strings."""
        guarded = self._guarded.get(base)
        if guarded is not None:
            return guarded
        original = base.VALIDATORS.get("pattern")

        def pattern(validator: Any, patrn: Any, instance: Any, schema: Any) -> Iterator[Any]:
            if original is None or not isinstance(instance, str) or not isinstance(patrn, str):
                return
            if len(instance) > MAX_PATTERN_INPUT or self._is_risky(patrn):
                return
            yield from original(validator, patrn, instance, schema)

        keywords: dict[str, Any] = {"pattern": pattern}
        for name, keyword in base.VALIDATORS.items():
            if name in REFS:
                keywords[name] = self._budgeted(keyword, REF_COST)
            elif name in APPLICATORS:
                keywords[name] = self._budgeted(keyword, 1)
        guarded = self._module.extend(base, keywords)
        self._guarded[base] = guarded
        return guarded

    def _budgeted(self, keyword: Any, cost: int) -> Any:
        """An applicator that pays for itself and, roughly, for the subschemas it applies."""

        def counted(validator: Any, value: Any, instance: Any, schema: Any) -> Iterator[Any]:
            self._steps -= cost + (len(instance) if isinstance(instance, (list, dict)) else 0)
            if self._steps < 0:
                raise _OverBudget
            yield from keyword(validator, value, instance, schema)

        return counted

    def check(
        self, conversation: str, tool: str, schema: Any, instance: Any, root: str
    ) -> Outcome | None:
        """Validate ``instance``; ``None`` when it could not be judged."""
        validator = self.validator(conversation, tool, schema)
        if validator is None:
            return None
        from referencing.exceptions import Unresolvable

        self._steps = MAX_STEPS
        try:
            found = list(islice(validator.iter_errors(instance), MAX_ERRORS + 1))
        except _OverBudget:
            self.skipped.put((conversation, tool, "budget"), f"more than {MAX_STEPS} steps")
            return None
        except Unresolvable as exc:
            return Outcome(errors=[], unresolved=_unresolved_ref(exc))
        except Exception:  # a schema jsonschema cannot apply: no judgment
            return None
        errors = [_error_text(root, e) for e in found[:MAX_ERRORS]]
        return Outcome(errors=errors, more=len(found) > MAX_ERRORS)


def _pattern_property_keys(schema: Any) -> Iterator[str]:
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            pp = node.get("patternProperties")
            if isinstance(pp, dict):
                yield from (k for k in pp if isinstance(k, str))
            stack.extend(v for v in node.values() if isinstance(v, (dict, list)))
        elif isinstance(node, list):
            stack.extend(v for v in node if isinstance(v, (dict, list)))


def _unresolved_ref(exc: Exception) -> str:
    ref = getattr(exc, "ref", None)
    wrapped = getattr(exc, "_wrapped", None)
    if ref is None and wrapped is not None:
        ref = getattr(wrapped, "ref", None)
    return str(ref) if ref is not None else str(exc)


_IDENT = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")


def json_path(root: str, path: Any) -> str:
    out = root
    for step in path:
        if isinstance(step, int):
            out += f"[{step}]"
        elif isinstance(step, str) and _IDENT.fullmatch(step):
            out += f".{step}"
        else:
            out += f"[{shown(step, 40)}]"
    return out


def _error_text(root: str, error: Any) -> str:
    message = str(getattr(error, "message", error))
    if len(message) > 200:
        message = message[:199] + "…"
    return f"{json_path(root, getattr(error, 'absolute_path', ()))}: {message}"


def describe(outcome: Outcome) -> str:
    text = "; ".join(outcome.errors)
    return text + (" (and more)" if outcome.more else "")


# ---------------------------------------------------------------------------------------------
# x-mcp-header annotations
# ---------------------------------------------------------------------------------------------

_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
PRIMITIVES = frozenset({"string", "integer", "boolean"})
SAFE_INTEGER = 2**53 - 1

# Keywords whose value is a map of name → subschema, a subschema, or a list of subschemas.
_SCHEMA_MAPS = frozenset(
    {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
)
_SCHEMA_ONE = frozenset(
    {
        "items",
        "additionalItems",
        "additionalProperties",
        "unevaluatedItems",
        "unevaluatedProperties",
        "contains",
        "propertyNames",
        "not",
        "if",
        "then",
        "else",
        "contentSchema",
    }
)
_SCHEMA_LISTS = frozenset({"allOf", "anyOf", "oneOf", "prefixItems", "items"})


class HeaderAnnotation(msgspec.Struct, frozen=True):
    """An ``x-mcp-header`` found in an ``inputSchema``."""

    name: Any  # the annotation's value (the part after ``Mcp-Param-``)
    where: str  # e.g. ``inputSchema.properties.region``
    chain: tuple[str, ...] | None  # the property path, when statically reachable
    problems: tuple[str, ...] = ()


def header_annotations(schema: Any) -> list[HeaderAnnotation] | None:
    """Every ``x-mcp-header`` of an ``inputSchema`` with its problems; ``None`` if too big."""
    if not isinstance(schema, dict) or schema_shape_problem(schema) is not None:
        return None
    found: list[HeaderAnnotation] = []
    # (schema node, where, property chain or None when not statically reachable)
    stack: list[tuple[Any, str, tuple[str, ...] | None]] = [(schema, "inputSchema", ())]
    while stack:
        node, where, chain = stack.pop()
        if not isinstance(node, dict):
            continue
        if "x-mcp-header" in node:
            problems = _annotation_problems(node, chain)
            found.append(HeaderAnnotation(node["x-mcp-header"], where, chain, tuple(problems)))
        for key, value in node.items():
            if key in _SCHEMA_MAPS and isinstance(value, dict):
                for name, sub in value.items():
                    static = (*chain, name) if key == "properties" and chain is not None else None
                    stack.append((sub, f"{where}.{key}.{name}", static))
            elif key in _SCHEMA_LISTS and isinstance(value, list):
                for i, sub in enumerate(value):
                    stack.append((sub, f"{where}.{key}[{i}]", None))
            elif key in _SCHEMA_ONE and isinstance(value, dict):
                stack.append((value, f"{where}.{key}", None))
    names: dict[str, int] = {}
    for ann in found:
        if isinstance(ann.name, str):
            names[ann.name.lower()] = names.get(ann.name.lower(), 0) + 1
    out = []
    for ann in sorted(found, key=lambda a: a.where):
        issues = ann.problems
        if isinstance(ann.name, str) and names.get(ann.name.lower(), 0) > 1:
            issues = (*issues, "is not unique (case-insensitive)")
        out.append(HeaderAnnotation(ann.name, ann.where, ann.chain, issues))
    return out


def _annotation_problems(node: dict[str, Any], chain: tuple[str, ...] | None) -> list[str]:
    value = node["x-mcp-header"]
    problems: list[str] = []
    if not isinstance(value, str):
        problems.append("is not a string")
    elif not value:
        problems.append("is empty")
    elif _CONTROL.search(value):
        problems.append("contains a control character")
    elif not _TOKEN.fullmatch(value):
        problems.append("is not an HTTP field-name token")
    if not chain:
        problems.append("is not on a property reachable through `properties` alone")
    kind = _primitive_kind(node)
    if kind == "number":
        problems.append("is on a `number` parameter (only integer, string, boolean)")
    elif kind is None:
        problems.append("is on a parameter that is not integer, string or boolean")
    return problems


def _primitive_kind(node: dict[str, Any]) -> str | None:
    """``string``/``integer``/``boolean`` when the schema is one of those, ``number`` when
    it is a number, ``None`` otherwise."""
    types = node.get("type")
    if isinstance(types, str):
        types = [types]
    if isinstance(types, list):
        kinds = {t for t in types if t != "null"}
        if "number" in kinds:
            return "number"
        if len(kinds) == 1 and kinds <= PRIMITIVES:
            return str(next(iter(kinds)))
        return None
    values = node.get("enum") if "enum" in node else [node["const"]] if "const" in node else None
    if isinstance(values, list) and values:
        kinds = {_value_kind(v) for v in values}
        if len(kinds) == 1 and kinds <= PRIMITIVES:
            return str(next(iter(kinds)))
    return None


def _value_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, str):
        return "string"
    return "other"


# ---------------------------------------------------------------------------------------------
# Cache hints (modern)
# ---------------------------------------------------------------------------------------------


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

    def __init__(self) -> None:
        # (method, nextCursor) → the scope and seq of the list's first page with a scope
        self._chains: PerConversation[Lru[tuple[str, str], _ListChain]] = PerConversation(
            lambda: Lru(MAX_KEYS)
        )
        self._decoder = MessageDecoder()

    def on_message(self, ctx: MessageContext) -> Findings:
        result = ctx.result
        method = ctx.method
        if ctx.entry.dir != "s2c" or not is_complete(result) or method is None:
            return None
        scope = result.get("cacheScope")
        scope = scope if scope in ("public", "private") else None
        chains = self._chains(ctx.conversation)
        cursor = request_params(ctx.request, self._decoder).get("cursor")
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


# ---------------------------------------------------------------------------------------------
# Tools
# ---------------------------------------------------------------------------------------------


class _ToolsState:
    __slots__ = ("listed",)

    def __init__(self) -> None:
        self.listed: Lru[str, int] = Lru(MAX_KEYS)  # tool name → seq of the list that declared it


class _SchemaRule(Rule):
    """Shared by the two schema rules: where each tool was declared, the validators."""

    def __init__(self) -> None:
        self._state: PerConversation[_ToolsState] = PerConversation(_ToolsState)
        self.checker = SchemaChecker()

    def _remember_list(self, ctx: MessageContext) -> None:
        result = ctx.result
        tools = result.get("tools") if isinstance(result, dict) else None
        if not isinstance(tools, list):
            return
        listed = self._state(ctx.conversation).listed
        for tool in tools:
            if isinstance(tool, dict) and isinstance(tool.get("name"), str):
                listed.put(tool["name"], ctx.seq)

    def _tool(self, ctx: MessageContext) -> tuple[str, dict[str, Any], list[int]] | None:
        name = ctx.flow.name
        if name is None:
            return None
        tool = ctx.conversation.declared.tools.get(name)
        if not isinstance(tool, dict):
            return None
        state = self._state.peek(ctx.conversation)
        listed = state.listed.get(name) if state is not None else None
        return name, tool, [listed] if listed is not None else []

    def on_conversation_end(self, conversation: Conversation) -> Findings:
        self._state.drop(conversation)
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
        found = self._tool(ctx)
        if found is None:
            return None
        name, tool, also = found
        schema = tool.get("outputSchema")
        if not isinstance(schema, dict):
            return None
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
                    f"{what}: outputSchema refers to {outcome.unresolved}, an external $ref that "
                    "is never fetched, so structuredContent cannot be validated",
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
        found = self._tool(ctx)
        if found is None:
            return None
        name, tool, also = found
        schema = tool.get("inputSchema")
        if not isinstance(schema, dict):
            return None
        params = ctx.params if isinstance(ctx.params, dict) else {}
        arguments = params.get("arguments", {})
        outcome = self.checker.check(ctx.conversation.key, name, schema, arguments, "arguments")
        if outcome is None:
            return None
        what = f"tools/call {name} (id {id_text(ctx)})"
        if outcome.unresolved is not None:
            return [
                ctx.finding(
                    f"{what}: inputSchema refers to {outcome.unresolved}, an external $ref that "
                    "is never fetched, so the arguments cannot be validated",
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


class ToolsNameFormat(Rule):
    id = "tools.name-format"
    severity = "warning"
    summary = "a tool name outside 1-128 chars of A-Za-z0-9_-. or duplicated in one list"
    spec = f"{TOOLS}#tool-names"
    kinds = frozenset({"result"})
    methods = frozenset({"tools/list"})

    def __init__(self) -> None:
        self._reported: PerConversation[Lru[str, None]] = PerConversation(lambda: Lru(MAX_KEYS))

    def on_message(self, ctx: MessageContext) -> Findings:
        result = ctx.result
        tools = result.get("tools") if isinstance(result, dict) else None
        if ctx.entry.dir != "s2c" or not isinstance(tools, list):
            return None
        reported = self._reported(ctx.conversation)
        problems: list[str] = []
        seen: set[str] = set()
        for tool in tools:
            name = tool.get("name") if isinstance(tool, dict) else None
            problem = name_problem(name)
            if problem is None and isinstance(name, str) and name in seen:
                problem = f"tool name {shown(name, 60)} appears more than once in this list"
            if isinstance(name, str):
                seen.add(name)
            if problem is not None and problem not in reported:
                reported.put(problem, None)
                problems.append(problem)
        if not problems:
            return None
        text = "; ".join(problems[:MAX_SHOWN])
        if len(problems) > MAX_SHOWN:
            text += f" (and {len(problems) - MAX_SHOWN} more)"
        return [ctx.finding(f"tools/list (id {id_text(ctx)}): {text}")]

    def on_conversation_end(self, conversation: Conversation) -> Findings:
        self._reported.drop(conversation)
        return None


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
        self._decoder = MessageDecoder()

    def on_message(self, ctx: MessageContext) -> Findings:
        result = ctx.result
        tools = result.get("tools") if isinstance(result, dict) else None
        if ctx.entry.dir != "s2c" or not isinstance(tools, list):
            return None
        names = tuple(
            t["name"] for t in tools if isinstance(t, dict) and isinstance(t.get("name"), str)
        )
        cursor = request_params(ctx.request, self._decoder).get("cursor")
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


class ToolsXMcpHeader(Rule):
    id = "tools.x-mcp-header"
    severity = "error"
    era = "modern"
    summary = "an x-mcp-header annotation that breaks its constraints"
    spec = f"{TOOLS}#x-mcp-header"
    kinds = frozenset({"result"})
    methods = frozenset({"tools/list"})

    def __init__(self) -> None:
        self._reported: PerConversation[Lru[str, None]] = PerConversation(lambda: Lru(MAX_KEYS))

    def on_message(self, ctx: MessageContext) -> Findings:
        result = ctx.result
        tools = result.get("tools") if isinstance(result, dict) else None
        if ctx.entry.dir != "s2c" or not isinstance(tools, list):
            return None
        reported = self._reported(ctx.conversation)
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
                for a in bad[:MAX_SHOWN]
            ]
            text = f"tool {shown(tool.get('name'), 60)}: " + "; ".join(parts)
            if len(bad) > MAX_SHOWN:
                text += f" (and {len(bad) - MAX_SHOWN} more)"
            if text in reported:
                continue
            reported.put(text, None)
            findings.append(ctx.finding(text + " (clients MUST exclude this tool)"))
        return findings

    def on_conversation_end(self, conversation: Conversation) -> Findings:
        self._reported.drop(conversation)
        return None


# ---------------------------------------------------------------------------------------------
# Resources
# ---------------------------------------------------------------------------------------------


class _Known:
    __slots__ = ("listed", "overflow", "templates", "uris")

    def __init__(self) -> None:
        self.uris: set[str] = set()
        self.templates: dict[str, re.Pattern[str]] = {}
        self.listed = False  # a resources/list result was seen
        self.overflow = False  # too many URIs to remember: no inference any more

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
    kinds = frozenset({"result", "notification"})

    def __init__(self) -> None:
        self._known: PerConversation[_Known] = PerConversation(_Known)
        self._decoder = MessageDecoder()

    def on_message(self, ctx: MessageContext) -> Findings:
        if ctx.entry.dir != "s2c":
            return None
        method = ctx.method
        known = self._known(ctx.conversation)
        if ctx.kind == "notification":
            params = ctx.params
            if isinstance(params, dict):
                known.add(params.get("uri"))
            return None
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
        uri = request_params(ctx.request, self._decoder).get("uri")
        if contents != [] or not isinstance(uri, str):
            for item in contents if isinstance(contents, list) else ():
                if isinstance(item, dict):
                    known.add(item.get("uri"))
            return None
        if not known.listed or known.overflow or known.knows(uri) or ctx.request is None:
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

    def on_conversation_end(self, conversation: Conversation) -> Findings:
        self._known.drop(conversation)
        return None
