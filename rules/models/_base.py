"""What every schema model shares: the base Struct, renamed and optional members, the
``anyOf`` checks msgspec cannot express natively, and msgspec's errors as short problems.

msgspec stops at the first mismatch and says where (``Expected `str`, got `int` - at
`$.name```); :func:`problem` turns that into ``params.name: expected str, got int``.
Where a schema ``anyOf`` is not discriminated by a tag, a model keeps the member as
``Any`` and checks it in ``__post_init__`` with :func:`sub` / :func:`any_of`, which
re-raise with the member's relative path so the whole path survives.
"""

from __future__ import annotations

import functools
import re
from typing import Any, NamedTuple, dataclass_transform

import msgspec
import msgspec.inspect as mi

UNSET: Any = msgspec.UNSET
Unset = msgspec.UnsetType
Meta = dict[str, Any]  # a `_meta` object (MetaObject): any JSON object


class _KwOnly(msgspec.StructMeta):
    """Every model's members are keyword-only, so required ones may follow optional ones."""

    def __new__(mcls, name: str, bases: Any, namespace: Any, **kwargs: Any) -> Any:
        kwargs.setdefault("kw_only", True)
        return super().__new__(mcls, name, bases, namespace, **kwargs)


@dataclass_transform(kw_only_default=True, field_specifiers=(msgspec.field,))
class Model(msgspec.Struct, metaclass=_KwOnly, forbid_unknown_fields=False, gc=False):
    """A schema object. The MCP schemas never forbid additional members."""


def named(name: str) -> Any:
    """An optional member whose JSON name is not a Python identifier (``_meta``, ``$schema``)."""
    return msgspec.field(default=UNSET, name=name)


def required(name: str) -> Any:
    """A required member with such a name."""
    return msgspec.field(name=name)


class Problem(NamedTuple):
    """Where a value breaks its schema and what was expected there."""

    path: str
    text: str

    def __str__(self) -> str:
        return f"{self.path}: {self.text}"


_AT = " - at `"
_BACKTICKS = re.compile(r"`([^`]*)`")


def json_type(value: Any) -> str:
    """A value's type in msgspec's words (``str``, ``int``, ``object``, ``null``…)."""
    if value is None:
        return "null"
    return _JSON_TYPES.get(type(value), "object")


_JSON_TYPES = {bool: "bool", int: "int", float: "float", str: "str", list: "array"}


def split(text: str) -> tuple[str, str]:
    """msgspec's message and path (``.a[0].b``, ``""`` for the root), nested paths joined."""
    parts = text.split(_AT)
    # A check in __post_init__ re-raises with its own relative path; msgspec then
    # appends the path of the object that ran it: outermost last.
    segments = [p.rstrip("`").removeprefix("$") for p in parts[1:]]
    return parts[0], "".join(reversed(segments))


def describe(message: str) -> str:
    """``Expected `str`, got `int``` → ``expected str, got int``."""
    if message.startswith("Object missing required field "):
        return "missing required " + message.removeprefix("Object missing required ")
    message = _BACKTICKS.sub(r"\1", message).replace("Invalid enum value", "Invalid value")
    return message[:1].lower() + message[1:]


def problem(root: str, exc: msgspec.ValidationError, typ: Any = None) -> Problem:
    message, path = split(str(exc))
    text = describe(message)
    if typ is not None and message.startswith("Invalid") and "(expected" not in text:
        choices = expected_at(typ, path)
        if choices:
            text += f" (expected {choices})"
    return Problem(root + path, text)


def convert(value: Any, typ: Any) -> Any:
    """``msgspec.convert(value, typ)``: the same value, or the same error with the same text.

    msgspec keeps how to convert to a type only on a Struct class; for any other type
    (a union of models, a list of them, a Literal) it works that out again on every
    call, which costs several times the conversion itself (about 60 µs against 12 on
    a union of request models). So such a type is converted as the one member of a
    Struct built for it once, and msgspec's path of a mismatch is given back without
    that member's name.
    """
    if isinstance(typ, msgspec.StructMeta):
        return msgspec.convert(value, typ)
    try:
        holder = _holder(typ)
    except TypeError:  # a type that cannot be a cache key: converted as it is
        return msgspec.convert(value, typ)
    try:
        return msgspec.convert({"value": value}, holder).value
    except msgspec.ValidationError as exc:
        raise msgspec.ValidationError(_unheld(str(exc))) from None


def converted_problem(root: str, value: Any, typ: Any) -> Problem | None:
    """What :func:`convert` of ``value`` to ``typ`` finds wrong, as a :func:`problem` under
    ``root`` (``None``: nothing). Remembered by the value's JSON text: a server repeats
    the same values (an MRTR server its input requests in every ``input_required``
    result), and a conversion that fails costs tens of µs in raised errors each time."""
    try:
        text = msgspec.json.encode(value)
    except (TypeError, ValueError, RecursionError):  # not encodable again: judged as it is
        text = None
    found = _converted_problem(text, typ) if text is not None else _problem_of(value, typ)
    return None if found is None else Problem(root + found.path, found.text)


@functools.lru_cache(maxsize=256)
def _converted_problem(text: bytes, typ: Any) -> Problem | None:
    return _problem_of(msgspec.json.decode(text), typ)


def _problem_of(value: Any, typ: Any) -> Problem | None:
    try:
        convert(value, typ)
    except msgspec.ValidationError as exc:
        return problem("", exc, typ)
    return None


@functools.lru_cache(maxsize=512)
def _holder(typ: Any) -> Any:
    return msgspec.defstruct("Held", [("value", typ)], gc=False)


_HELD = _AT + "$.value"


def _unheld(text: str) -> str:
    """An error's text as ``msgspec.convert(value, typ)`` words it: msgspec appends where
    the mismatch is last, and there ``$.value`` is the root of the value converted."""
    at = text.rfind(_HELD)
    if at < 0:
        return text
    rest = text[at + len(_HELD) :]
    return text[:at] if rest == "`" else f"{text[:at]}{_AT}${rest}"


def sub(value: Any, typ: Any, where: str) -> Any:
    """Convert a member from ``__post_init__``; a mismatch keeps its full path."""
    try:
        return convert(value, typ)
    except msgspec.ValidationError as exc:
        raise ValueError(_relocated(exc, typ, where)) from None


def any_of(value: Any, types: tuple[Any, ...], where: str) -> None:
    """JSON Schema ``anyOf``: valid when one member type accepts ``value``.

    On failure the first type's complaint is reported, so callers put the most
    plausible member first.
    """
    first: tuple[msgspec.ValidationError, Any] | None = None
    for typ in types:
        try:
            convert(value, typ)
            return
        except msgspec.ValidationError as exc:
            if first is None:
                first = (exc, typ)
    assert first is not None
    raise ValueError(_relocated(first[0], first[1], where))


def _relocated(exc: msgspec.ValidationError, typ: Any, where: str) -> str:
    message, path = split(str(exc))
    if message.startswith("Invalid") and "(expected" not in message:
        choices = expected_at(typ, path)
        if choices:
            message += f" (expected {choices})"
    return f"{message}{_AT}${where}{path}`"


# -- what an enum or a tag would have accepted ----------------------------------------------
def expected_at(typ: Any, path: str) -> str | None:
    """The accepted values of the Literal or union tag found at ``path`` under ``typ``."""
    try:
        values = _walk(_info(typ), path)
    except (TypeError, ValueError):  # a type msgspec.inspect cannot describe
        return None
    if not values:
        return None
    shown = ", ".join(repr(v) for v in values[:8])
    return f"one of {shown}" if len(values) > 1 else shown


@functools.lru_cache(maxsize=256)
def _info(typ: Any) -> mi.Type:
    return mi.type_info(typ)


_STEP = re.compile(r"\[(\d+|\.\.\.)\]")


def _walk(node: mi.Type, path: str) -> tuple[Any, ...]:
    if not path:
        return node.values if isinstance(node, mi.LiteralType) else ()
    if isinstance(node, mi.UnionType):
        if path.startswith("."):
            tags = tuple(
                t.tag
                for t in node.types
                if isinstance(t, mi.StructType) and t.tag_field == path[1:]
            )
            if tags:
                return tags
        for member in node.types:
            found = _walk(member, path)
            if found:
                return found
        return ()
    if isinstance(node, mi.StructType) and path.startswith("."):
        rest = path[1:]
        # member names may hold dots (`io.modelcontextprotocol/logLevel`): longest first
        for f in sorted(node.fields, key=lambda f: -len(f.encode_name)):
            if rest == f.encode_name or rest.startswith((f.encode_name + ".", f.encode_name + "[")):
                return _walk(f.type, rest[len(f.encode_name) :])
        return ()
    step = _STEP.match(path)
    if step is None:
        return ()
    if isinstance(node, mi.ListType | mi.DictType):
        inner = node.item_type if isinstance(node, mi.ListType) else node.value_type
        return _walk(inner, path[step.end() :])
    return ()
