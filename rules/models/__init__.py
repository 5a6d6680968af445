"""Typed msgspec models of the MCP schemas, per protocol version, and the checks built on them.

    spec = spec_for("2026-07-28")
    spec.check_params("tools/call", raw_params)   # None, or Problem("params.name", "…")
    spec.check_result("tools/call", raw_result)
    spec.check_error(raw_error)

Each version's registry maps a method to its params and result models; it is
built once at import. Decoders are built on first use and cached, and a
message's raw ``params`` / ``result`` bytes are decoded straight into the model.
Unknown versions fall back to the nearest known one of their era (the latest
known not after it). ``strict`` also checks what other catalog rules report in
the modern era (see :mod:`mcpeek.rules.models.v2026_07_28`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import msgspec

from mcpeek.rules.models import older, v2025_11_25, v2026_07_28
from mcpeek.rules.models._base import UNSET, Model, Problem, problem
from mcpeek.rules.models.registry import Check, Method, Version

Raw = bytes | bytearray | memoryview | msgspec.Raw

MODERN_VERSIONS = ("2026-07-28",)
LEGACY_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
_VERSIONS: dict[str, Version] = {
    v.name: v
    for v in (
        older.V2024_11_05,
        older.V2025_03_26,
        older.V2025_06_18,
        v2025_11_25.VERSION,
        v2026_07_28.VERSION,
    )
}
#: Every method any known revision defines (requests and notifications).
ALL_METHODS = frozenset(
    m for v in _VERSIONS.values() for table in (v.requests, v.notifications) for m in table
)
ALL_REQUESTS = frozenset(m for v in _VERSIONS.values() for m in v.requests)
ALL_NOTIFICATIONS = frozenset(m for v in _VERSIONS.values() for m in v.notifications)
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}\Z")


class _Peek(Model):
    resultType: Any = UNSET
    task: Any = UNSET


class _ErrorPeek(Model):
    code: Any = UNSET
    data: msgspec.Raw = msgspec.Raw(b"")  # empty: absent (a JSON null is b"null")


_DECODERS: dict[Any, msgspec.json.Decoder[Any]] = {}


def decoder(typ: Any) -> msgspec.json.Decoder[Any]:
    """The JSON decoder of a model (built once)."""
    found = _DECODERS.get(typ)
    if found is None:
        found = _DECODERS[typ] = msgspec.json.Decoder(typ)
    return found


class Spec:
    """One protocol version's models and checks; get it from :func:`spec_for`."""

    def __init__(self, version: Version) -> None:
        self.version = version
        self.name = version.name
        self.modern = version.input_required is not None

    def __repr__(self) -> str:
        return f"<Spec {self.name}>"

    def method(self, method: str | None, *, notification: bool = False) -> Method | None:
        table = self.version.notifications if notification else self.version.requests
        return table.get(method) if method is not None else None

    def check_params(
        self,
        method: str | None,
        raw: Raw | None,
        *,
        notification: bool = False,
        strict: bool = True,
    ) -> Problem | None:
        """Params of a request or notification; ``raw`` is ``None`` when ``params`` is absent."""
        entry = self.method(method, notification=notification)
        if entry is None:
            return None
        if raw is None:
            if not entry.params_required:
                return None
            if strict:
                return Problem("params", f"missing (required for {method})")
            raw = b"{}"  # what is missing beyond _meta still shows
        return _run("params", entry.params, entry.check_params, raw, strict)

    def check_result(
        self,
        method: str | None,
        raw: Raw,
        *,
        strict: bool = True,
        task_augmented: Callable[[], bool] | None = None,
        input_required: bool = False,
    ) -> Problem | None:
        """The result of a request, by the request's method.

        In 2026-07-28 ``resultType`` says how to read it; in 2025-11-25 a result
        with a ``task`` to a task-augmented request (``task_augmented()``; by
        default any) is a ``CreateTaskResult``. ``input_required``: the caller
        already knows the result says ``resultType: "input_required"`` (correlation
        peeked it), which spares decoding it as the method's result first.
        """
        entry = self.method(method)
        if entry is None or entry.result is None:
            return None
        other = self.version.input_required
        if input_required and other is not None and (entry.retryable or not strict):
            assert other.result is not None
            return _run("result", other.result, other.check_result, raw, strict)
        obj: Any = None
        failure: msgspec.ValidationError | None = None
        try:
            obj = decoder(entry.result).decode(raw)
        except msgspec.ValidationError as exc:
            failure = exc
        except msgspec.DecodeError:
            return None  # not JSON: the envelope rules' business
        if obj is not None and not self.modern:
            return entry.check_result(obj, strict) if entry.check_result else None
        kind = getattr(obj, "resultType", UNSET) if obj is not None else self._peek(raw)
        if self.modern:
            if kind == "input_required" and (entry.retryable or not strict):
                other = self.version.input_required
                assert other is not None and other.result is not None
                return _run("result", other.result, other.check_result, raw, strict)
            if kind not in (UNSET, "complete") and not strict:
                return None  # an extension's result type, or a broken one: not ours to read
        elif (
            kind == "task"
            and entry.task
            and self.version.task_result is not None
            and (task_augmented is None or task_augmented())
        ):
            return _run("result", self.version.task_result, None, raw, strict)
        if failure is not None:
            return problem("result", failure, entry.result)
        return entry.check_result(obj, strict) if entry.check_result else None

    def check_error(self, raw: Raw, *, strict: bool = True) -> Problem | None:
        """The ``data`` of a defined MCP error (``raw`` is the whole ``error`` member)."""
        try:
            error = decoder(_ErrorPeek).decode(raw)
        except (msgspec.ValidationError, msgspec.DecodeError):
            return None
        code = error.code
        entry = self.version.errors.get(code) if type(code) is int else None
        if entry is None:
            return None
        lenient = entry.check is not None and not strict  # presence is another rule's
        if not error.data:
            if lenient:
                return None
            return Problem("error", f"missing required field `data` ({entry.name}, {code})")
        try:
            data = decoder(entry.model).decode(error.data)
        except msgspec.ValidationError as exc:
            if lenient and str(exc).startswith("Expected `object`"):
                return None
            return problem("error.data", exc, entry.model)
        return entry.check(data, strict) if entry.check else None

    def _peek(self, raw: Raw) -> Any:
        """``resultType`` (2026-07-28) or ``"task"`` if a ``task`` member is there (2025-11-25)."""
        try:
            peek = decoder(_Peek).decode(raw)
        except (msgspec.ValidationError, msgspec.DecodeError):
            return UNSET
        if self.modern:
            return peek.resultType
        return "task" if peek.task is not UNSET else UNSET


def _run(
    root: str, model: type[Model], check: Check | None, raw: Raw, strict: bool
) -> Problem | None:
    try:
        obj = decoder(model).decode(raw)
    except msgspec.ValidationError as exc:
        return problem(root, exc, model)
    except msgspec.DecodeError:
        return None
    return check(obj, strict) if check is not None else None


_SPECS: dict[str, Spec] = {}


def spec_for(version: str | None, era: str | None = None) -> Spec:
    """The models for ``version`` in ``era``: the nearest known version of that era.

    ``era`` ``"modern"`` / ``"legacy"`` picks the family (a legacy conversation
    that negotiated some future date still speaks ``initialize``); without it the
    version's date decides. A version older than every known one of its family
    gets the oldest; a missing or malformed one the newest.
    """
    if era is None:
        era = "modern" if version is not None and version >= MODERN_VERSIONS[0] else "legacy"
    family = MODERN_VERSIONS if era == "modern" else LEGACY_VERSIONS
    if version is None or not _DATE.match(version):
        name = family[-1]
    else:
        earlier = [v for v in family if v <= version]
        name = earlier[-1] if earlier else family[0]
    spec = _SPECS.get(name)
    if spec is None:
        spec = _SPECS[name] = Spec(_VERSIONS[name])
    return spec


__all__ = [
    "ALL_METHODS",
    "ALL_NOTIFICATIONS",
    "ALL_REQUESTS",
    "LEGACY_VERSIONS",
    "MODERN_VERSIONS",
    "UNSET",
    "Model",
    "Problem",
    "Spec",
    "decoder",
    "spec_for",
]
