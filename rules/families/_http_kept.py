"""What the ``http.*`` rules keep of a client message that waits for its response head.

The :class:`~mcpeek.rules.families._http_tracker.ExchangeTracker` keeps a client
message that comes before its exchange's response head, and every HTTP rule
judges it when the head (or the end) comes. The message may be 16 MB; the
response being read meanwhile may be 16 MB too. So the tracker keeps a
:class:`KeptMessage`: the message's plain facts (seq, kind, method, era,
version, its flow and conversation) and only the parts of its params the HTTP
rules read of a client message, taken from the params the rules decoded at
once:

* ``name`` and ``uri`` (``Mcp-Name``, and the tool of ``Mcp-Param-*``), when
  they are strings (the rules ignore any other value);
* ``_meta``'s ``protocolVersion`` (``MCP-Protocol-Version``; whether a legacy
  session's request is a modern one);
* of a ``tools/call``'s ``arguments``, the values its tool's ``x-mcp-header``
  annotations point at, the tool as the conversation declared it when the call
  was sent (:func:`declared_tool`): the client built the headers from that.

Its entry keeps the start of the message's bytes, as much as a report's
excerpt shows (:func:`excerpt_record`), not the bytes: the flow's end drops
those. Any other lazy member of the message is not kept, and asking for one
raises (a rule that needs it must be added here), rather than decoding what
is not there.
"""

from __future__ import annotations

import base64
from typing import Any

import msgspec

from mcpeek.inspector.jsonrpc import json_value
from mcpeek.inspector.records import Msg, wire_bytes
from mcpeek.rules.context import LAZY_BITS, MESSAGE_BIT, PARAMS_BIT, MessageContext
from mcpeek.rules.families._toolschema import header_annotations
from mcpeek.rules.reported import EXCERPT

MCP_VERSION = "io.modelcontextprotocol/protocolVersion"
# Characters of the text kept for the excerpt: one more than it shows, so that a
# kept text is cut just as the whole one is. Bytes of a ``raw_b64`` message: each
# character takes at most 4, and one more for a character the cut splits.
EXCERPT_CHARS = EXCERPT + 1
EXCERPT_BYTES = 4 * (EXCERPT + 2)


class KeptMessage(MessageContext):
    """A client message judged at its exchange's response head: what the rules read."""

    #: the tool a ``tools/call`` names, as the conversation declared it when it was sent
    tool: Any = None


class _NotKept:
    """A lazy member of a message that :class:`KeptMessage` does not hold: reading it
    raises, rather than decoding what is left. Those it holds are set on the instance,
    which Python reads before a descriptor without ``__set__``. (Not ``__getattr__``:
    every attribute read of such a class takes a slower path, unspecialised.)"""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, ctx: KeptMessage | None, owner: type | None = None) -> Any:
        if ctx is None:  # (read on the class: the member itself)
            return self
        raise AttributeError(
            f"{self.name}: not kept of a message judged at its response head (see {__name__})"
        )


def _install_not_kept() -> None:
    for name in LAZY_BITS:
        setattr(KeptMessage, name, _NotKept(name))


_install_not_kept()


def keep(ctx: MessageContext) -> KeptMessage:
    """What the HTTP rules will read of ``ctx`` once its response head comes."""
    # Built as every context is (its plain facts set by the same code), on an entry
    # that keeps only the start of the bytes; no request memo: nothing is looked up
    # in it any more.
    entry = msgspec.structs.replace(ctx.entry, record=excerpt_record(ctx.entry.record))
    kept = KeptMessage(entry, ctx.flow, ctx.conversation, ctx._decoder, ctx.era, ctx.version)
    kept.conformant = ctx.conformant
    slim = _slim_params(ctx)
    if slim is not None and ctx.method == "tools/call" and "name" in slim:
        kept.tool = ctx.conversation.declared.tools.get(slim["name"])
        if "arguments" in slim:
            # (no tool declared: no annotation reaches any argument, known without a look)
            tool = kept.tool
            slim["arguments"] = _arguments(slim["arguments"], tool) if tool is not None else None
    kept.params = slim
    if ctx.kind != "result":  # (a result's _meta is in its result: not kept)
        kept.meta = slim.get("_meta") if slim is not None else None
    return kept


class _Meta(msgspec.Struct):
    version: Any = msgspec.field(name=MCP_VERSION, default=msgspec.UNSET)


class _Params(msgspec.Struct):
    """The members of params the HTTP rules read (the others are skipped, not built)."""

    name: Any = msgspec.UNSET
    uri: Any = msgspec.UNSET
    #: decoded only for a tool with header annotations (empty: absent, as no JSON value is)
    arguments: msgspec.Raw = msgspec.field(default_factory=msgspec.Raw)
    meta: _Meta | msgspec.UnsetType = msgspec.field(name="_meta", default=msgspec.UNSET)


class _Envelope(msgspec.Struct):
    params: _Params | None = None


_PARAMS = msgspec.json.Decoder(_Params)
_ENVELOPE = msgspec.json.Decoder(_Envelope)
#: the kinds whose params the careful decode takes from the top-level object, as this does
_PLAIN_KINDS = frozenset({"request", "notification"})


def _slim_params(ctx: MessageContext) -> dict[str, Any] | None:
    """``name``, ``uri`` (strings), ``_meta``'s protocol version and the raw ``arguments``
    of ``ctx``'s params; ``None`` when its params are not an object."""
    computed = ctx.computed  # (decoded already? Not by the rules yet)
    if computed & PARAMS_BIT:
        return _slim_of_dict(ctx.params)
    text = ctx.entry.record.raw
    if ctx.kind in _PLAIN_KINDS and text is not None and not computed & MESSAGE_BIT:
        # Most often: straight from the record's text, no careful decode of the message
        # (nobody else needs it when the gate vouches for it), nothing else built.
        try:
            found = _ENVELOPE.decode(text).params
        except (msgspec.MsgspecError, RecursionError, UnicodeError):
            pass  # (a batch, an odd member, bytes that are not UTF-8: as below)
        else:
            return _slim_of(found) if found is not None else None
    raw = ctx.message.params
    if raw is None:
        return None
    try:
        return _slim_of(_PARAMS.decode(raw))
    except (msgspec.MsgspecError, RecursionError):
        return _slim_of_dict(ctx.params)  # (an odd member: decoded whole, read as below)


def _slim_of(found: _Params) -> dict[str, Any]:
    slim: dict[str, Any] = {}
    if isinstance(found.name, str):
        slim["name"] = found.name
    if isinstance(found.uri, str):
        slim["uri"] = found.uri
    if found.meta is not msgspec.UNSET:
        version = found.meta.version
        slim["_meta"] = {MCP_VERSION: version} if isinstance(version, str) else {}
    if len(found.arguments):
        slim["arguments"] = found.arguments
    return slim


def _slim_of_dict(params: Any) -> dict[str, Any] | None:
    if not isinstance(params, dict):
        return None
    slim = {key: params[key] for key in ("name", "uri") if isinstance(params.get(key), str)}
    meta = params.get("_meta")
    if isinstance(meta, dict):
        version = meta.get(MCP_VERSION)
        slim["_meta"] = {MCP_VERSION: version} if isinstance(version, str) else {}
    if "arguments" in params:
        slim["arguments"] = params["arguments"]
    return slim


def declared_tool(ctx: MessageContext, name: str) -> Any:
    """The tool ``name`` as the client knew it when it sent ``ctx`` (kept or not)."""
    if isinstance(ctx, KeptMessage):
        return ctx.tool
    return ctx.conversation.declared.tools.get(name)


def _arguments(arguments: Any, tool: Any) -> Any:
    """Of ``arguments`` (raw, or decoded), what the tool's header annotations reach
    (``None`` for a value that is not an object, which the rule skips as it skips
    ``None``, or when no annotation reaches any)."""
    schema = tool.get("inputSchema") if isinstance(tool, dict) else None
    annotations = header_annotations(schema) if schema is not None else None
    chains = [a.chain for a in annotations or () if a.chain is not None]
    if not chains:
        return None  # (http.param-header reads no argument of such a tool)
    if isinstance(arguments, msgspec.Raw):
        arguments = json_value(arguments)
    return _reached(arguments, chains) if isinstance(arguments, dict) else None


def _reached(value: Any, chains: list[tuple[str, ...]]) -> Any:
    """``value`` with only the members the property ``chains`` walk through."""
    if not isinstance(value, dict) or any(not chain for chain in chains):
        return value  # a leaf (or not an object: the walk stops here)
    out: dict[str, Any] = {}
    for key in dict.fromkeys(chain[0] for chain in chains):
        if key in value:
            out[key] = _reached(value[key], [c[1:] for c in chains if c[0] == key])
    return out


def excerpt_record(record: Msg) -> Msg:
    """``record`` with only the start of its bytes: as much as a report's excerpt shows.

    UTF-8 decoding is the same on a prefix, but for a character the cut splits
    (at the very end); and a text cut longer than the excerpt is cut to the same
    characters, so the excerpt of the kept record is the whole one's.
    """
    raw = record.raw
    if raw is not None:
        if len(raw) <= EXCERPT_CHARS:
            return record
        return msgspec.structs.replace(record, raw=raw[:EXCERPT_CHARS])
    if record.raw_b64 is None or len(record.raw_b64) <= 2 * EXCERPT_BYTES:
        return record
    # (bytes that are not UTF-8: rare. Decoded whole, as the excerpt would: Base64
    # that does not decode gives no bytes at all, whatever its start.)
    start = wire_bytes(record)[:EXCERPT_BYTES]
    return msgspec.structs.replace(record, raw_b64=base64.b64encode(start).decode("ascii"))
