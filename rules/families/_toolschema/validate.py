"""The schema checker: compiles server-provided schemas offline and within bounds.

:class:`SchemaChecker` loads ``jsonschema`` lazily (without it,
:meth:`~SchemaChecker.available` is false and nothing is judged). A schema is
first measured (:mod:`.bounds`); only then is it hashed, and its compiled
validator cached per (conversation, tool, schema hash), at most
:data:`MAX_VALIDATORS` of them. Compiling refuses an unknown ``$schema``
dialect, a risky ``patternProperties`` regex and a schema that does not
check against its metaschema. The validator classes are *guarded*: their
applicators and references draw on the step budget, their ``pattern``
skips risky regexes and huge strings, and their referencing registry
refuses every URI it does not hold, so a ``$ref`` is never fetched. Why a
schema was not compiled, or an instance not judged, is kept in
``SchemaChecker.skipped``: it gives no finding.
"""

from __future__ import annotations

import hashlib
import importlib
from collections.abc import Iterator
from itertools import islice
from typing import Any

import msgspec

from mcpeek.rules.families._bounded import Lru
from mcpeek.rules.families._messages import shown
from mcpeek.rules.families._toolschema.bounds import (
    APPLICATORS,
    MAX_PATTERN_INPUT,
    MAX_STEPS,
    REF_COST,
    REFS,
    pattern_property_keys,
    risky_regex,
    schema_shape_problem,
)
from mcpeek.rules.families._toolschema.report import MAX_ERRORS, Outcome, error_text, unresolved_ref

MAX_VALIDATORS = 128  # compiled validators kept per rule


def _refuse_retrieval(uri: str) -> Any:
    from referencing.exceptions import NoSuchResource

    raise NoSuchResource(ref=uri)  # type: ignore[call-arg]


class _OverBudget(Exception):
    """A validation took more steps than :data:`MAX_STEPS`."""


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
        if any(self._is_risky(p) for p in pattern_property_keys(schema)):
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
            return Outcome(errors=[], unresolved=unresolved_ref(exc))
        except Exception:  # a schema jsonschema cannot apply: no judgment
            return None
        errors = [error_text(root, e) for e in found[:MAX_ERRORS]]
        return Outcome(errors=errors, more=len(found) > MAX_ERRORS)
