"""The conformance gate: one typed decode that proves a message gives the pure rules nothing to say.

Most traffic is conformant, and most of lint's cost was the pure per-message
rules (schema, envelope, ``_meta``, result types…) each looking at a message
that is fine. The gate decodes the whole message once, straight from its
text, into a Struct built for its (era, version, kind, method, direction):
the envelope (``jsonrpc`` exactly ``"2.0"``, an integer or string ``id``, no
member beyond the envelope's), the method's schema model (the strict one:
what the modern schema rules leave to other rules is required here too) and
a ``_meta`` that admits only the well-known keys of its place, with the
fields the spec requires there (the per-request protocol fields of a modern
request, ``serverInfo`` of a modern result). A modern result must say
``resultType: "complete"``; an error must have a string message and a code
that is JSON-RPC's own or outside the reserved ranges. Anything else, or
anything odd (a batch, bytes that are not UTF-8, more than one ``_meta``, a
method the spec does not define), is not accepted, and every rule runs as
before. The engine also asks a response to be a plain answer
(:func:`plain_answer`: no orphan, no second answer, the era known), so that
the response rules have nothing to say either.

The gate only ever says "certainly conformant": it may turn away a fine
message (then the rules run), never accept one a gated rule would flag. The
:class:`~mcpeek.rules.verify.VerifiedRuleEngine` (which the rule tests run)
runs a twin engine without the gate and reports any difference.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any, Literal, cast

import msgspec

from mcpeek.inspector.analysis import Flow
from mcpeek.rules.models import Spec, spec_for
from mcpeek.rules.models import modern as modern_models
from mcpeek.rules.models._base import UNSET, Model, Unset, named, required
from mcpeek.rules.models.content import Implementation, LoggingLevel, RequestId
from mcpeek.rules.models.registry import Method

MCP = "io.modelcontextprotocol/"
LISTEN = "subscriptions/listen"
GATED_KINDS = frozenset({"request", "notification", "result", "error"})
GATED_ERAS = frozenset({"modern", "legacy"})

Check = Callable[[str | None], bool]  # the message's text (Msg.raw) → certainly conformant

#: A typed decode skips unread what no model names, however deep; a decode into
#: Python values (what the rules see) gives up past the interpreter's recursion
#: depth (about 1,000). Text with fewer opening brackets than this cannot nest that
#: deep; nor can text shorter than twice as many characters (each needs its closer).
MAX_BRACKETS = 500
MAX_CHECKS = 4096  # built checks kept (one per era, version, kind, method, direction)
META = '"_meta"'  # (as it shows in a message's text)


# -- the _meta a conformant message may carry --------------------------------------------------
class _ModernRequestMeta(Model, forbid_unknown_fields=True):
    """A modern client request's ``_meta``: its protocol fields, all present; no other key
    (a vendor key or trace context goes the long way, past their rules). ``logLevel`` is
    deprecated, which deprecated.feature (not gated on requests) says."""

    progressToken: RequestId | Unset = UNSET
    protocolVersion: str = required(MCP + "protocolVersion")
    clientInfo: Implementation = required(MCP + "clientInfo")
    clientCapabilities: modern_models.ClientCapabilities = required(MCP + "clientCapabilities")
    logLevel: LoggingLevel | Unset = named(MCP + "logLevel")


class _ModernResultMeta(Model, forbid_unknown_fields=True):
    serverInfo: Implementation = required(MCP + "serverInfo")


class _ModernListenResultMeta(_ModernResultMeta, forbid_unknown_fields=True):
    subscriptionId: RequestId = required(MCP + "subscriptionId")


class _ModernNotificationMeta(Model, forbid_unknown_fields=True):
    subscriptionId: RequestId | Unset = named(MCP + "subscriptionId")


class _LegacyMeta(Model, forbid_unknown_fields=True):
    """Legacy ``_meta`` is free-form; the gate admits only a progress token."""

    progressToken: RequestId | Unset = UNSET


# -- building a gate ------------------------------------------------------------------------------
def _with_meta(model: type[Model], meta: Any, *, needed: bool, **more: Any) -> type[Model]:
    """``model`` with its ``_meta`` typed as ``meta`` (required when ``needed``) and the
    members in ``more`` (name → type, required) replaced."""
    namespace = {
        "__module__": __name__,
        "__annotations__": {"meta": meta if needed else meta | Unset, **more},
        "meta": required("_meta") if needed else named("_meta"),
    }
    name = f"Gate{model.__name__}"
    subclass = types.new_class(name, (model,), {}, lambda ns: ns.update(namespace))
    return cast(type[Model], subclass)


def envelope_struct(
    kind: str, member: str, body: Any, body_required: bool, name: str = "Gate"
) -> type[msgspec.Struct]:
    """The whole message: ``{"jsonrpc": "2.0", "id"…, "method"…, member: body}``, nothing else
    (``member`` is ``params``, ``result`` or ``error``)."""
    fields: list[Any] = [("jsonrpc", Literal["2.0"])]
    if kind != "notification":
        fields.append(("id", RequestId))
    if kind in ("request", "notification"):
        fields.append(("method", str))
    fields.append((member, body) if body_required else (member, body | Unset, UNSET))
    return msgspec.defstruct(
        f"{name}{kind.title()}", fields, kw_only=True, forbid_unknown_fields=True, gc=False
    )


#: Messages the gate turns away by method, though their schema is known: what
#: deprecated.feature or version.removed-method judge on them is beyond a model.
_NEVER: dict[tuple[str, str, str], frozenset[str]] = {
    ("legacy", "request", "c2s"): frozenset({"initialize"}),  # after a modern-only probe?
    ("legacy", "request", "s2c"): frozenset({"sampling/createMessage"}),  # includeContext
}


class _Error(Model):
    """An error object no error rule speaks of: an integer code that is JSON-RPC's own or
    outside every reserved range (see :func:`_plain_code`), a string message."""

    code: int
    message: str
    data: Any = UNSET


#: JSON-RPC's own codes; the rest of -32768..-32000 is reserved (MCP's codes, the legacy
#: range, the removed ones: each has a rule, and -32021/-32022 a schema for ``data``).
JSONRPC_CODES = frozenset({-32700, -32600, -32601, -32602, -32603})


def _plain_code(error: Any, strict: bool) -> Any:
    code = error.code
    if code in JSONRPC_CODES or not -32768 <= code <= -32000:
        return None
    return code  # not None: turned away


def _build(spec: Spec, era: str, kind: str, method: str | None, direction: str) -> Check | None:
    """The check for messages of this kind, or ``None`` when the gate never accepts them."""
    modern = era == "modern"
    if kind == "error":
        if modern and direction != "s2c":
            return None  # a modern client answers nothing (stdio.client-response)
        decoder = msgspec.json.Decoder(envelope_struct(kind, "error", _Error, True))
        return _checked(decoder, "error", _plain_code, metas_allowed=False)
    entry: Method | None = spec.method(method, notification=kind == "notification")
    if entry is None:
        return None  # not a method the spec defines: no model to prove anything with
    if method in _NEVER.get((era, kind, direction), ()):
        return None
    if kind == "result":
        if entry.result is None or (modern and direction != "s2c"):
            return None
        if modern:
            meta: Any = _ModernResultMeta
            if method == "subscriptions/listen":
                meta = _ModernListenResultMeta  # its subscription id is required there
            body = _with_meta(entry.result, meta, needed=True, resultType=Literal["complete"])
        else:
            body = _with_meta(entry.result, _LegacyMeta, needed=False)
        decoder = msgspec.json.Decoder(envelope_struct(kind, "result", body, True))
        hook = entry.check_result
        if modern and hook is modern_models.check_result and not _cacheable(entry.result):
            hook = None  # it asks only for the resultType the gate's model requires
        return _checked(decoder, "result", hook)
    if kind == "request" and modern:
        if direction != "c2s":
            return None
        body = _with_meta(entry.params, _ModernRequestMeta, needed=True)
        decoder = msgspec.json.Decoder(envelope_struct(kind, "params", body, True))
        hook = entry.check_params
        if hook is modern_models.check_request_meta:
            hook = None  # it asks only for the _meta fields _ModernRequestMeta requires
        return _checked(decoder, "params", hook)
    meta = _LegacyMeta if not modern else _ModernNotificationMeta
    body = _with_meta(entry.params, meta, needed=False)
    decoder = msgspec.json.Decoder(envelope_struct(kind, "params", body, entry.params_required))
    return _checked(decoder, "params", entry.check_params)


def _built(
    version: str | None, era: str, kind: str, method: str | None, direction: str
) -> Check | None:
    """:func:`_build` for the models ``spec_for`` picks (as the schema rules do); a model
    msgspec cannot build a decoder for means no gate there, not a crash."""
    try:
        return _build(spec_for(version, era), era, kind, method, direction)
    except (TypeError, ValueError):
        return None


def _cacheable(model: type[Model]) -> bool:
    return issubclass(model, modern_models.CacheableResult)


def _checked(
    decoder: msgspec.json.Decoder[Any],
    member: str,
    hook: Callable[[Any, bool], Any] | None,
    *,
    metas_allowed: bool = True,
) -> Check:
    """The whole check of one kind of message: what any text must show, then its decode.
    (One function per kind, with everything it needs bound: the engine calls it on every
    message of that kind.)"""
    decode = decoder.decode
    long_text = 2 * MAX_BRACKETS  # (bound here: every message reads them)
    max_brackets = MAX_BRACKETS

    def check(text: str | None) -> bool:
        # Not UTF-8 (kept as base64), a batch or a member of one, leading blanks, or a
        # _meta below the top level (the typed _meta checks only the top one): the rules.
        if text is None or text[:1] != "{":
            return False
        # (one count: a find and another past the first took 1.8x its instructions)
        found = text.count(META)
        if found > 1:
            return False
        metas = found == 1
        if len(text) > long_text and text.count("{") + text.count("[") > max_brackets:
            return False
        try:
            body = getattr(decode(text), member)
            if body is UNSET:
                return not metas  # the one _meta is somewhere the models leave free-form
            if metas and (not metas_allowed or body.meta is UNSET):
                return False  # likewise
            return hook is None or hook(body, True) is None
        except Exception:  # a MsgspecError, or a model's own check tripping on odd input
            return False

    return check


def plain_answer(flow: Flow) -> bool:
    """The correlation a response must show as well, for the response rules to have
    nothing to say: it answers a request of its flow (not an orphan), no attempt of
    the flow was answered twice, the flow's era was known when it began (so its
    request was judged then), and it is not a ``subscriptions/listen`` stream
    (whose result closes it)."""
    if flow.status == "orphan" or flow.era is None or flow.method == LISTEN:
        return False
    for attempt in flow.attempts:  # noqa: SIM110 (a loop: no generator built per response)
        if attempt.duplicates:
            return False
    return True


class Gate:
    """Decides, per message, whether it is certainly conformant (see the module doc)."""

    def __init__(self) -> None:
        self._checks: dict[tuple[str, str | None, str, str | None, str], Check | None] = {}

    @staticmethod
    def may_accept(kind: str, era: str | None) -> bool:
        """Whether messages of this kind in this era can ever pass (else it is not asked)."""
        return kind in GATED_KINDS and era in GATED_ERAS

    def check(
        self, era: str | None, version: str | None, kind: str, method: str | None, direction: str
    ) -> Check | None:
        """The check of the messages of this kind (``None``: the gate accepts none of them).
        The engine keeps it in its dispatch row, so that a message costs one call."""
        if era is None:
            return None
        key = (era, version, kind, method, direction)
        check: Check | None = self._checks.get(key, _UNBUILT)
        if check is _UNBUILT:
            # Built once per version seen: spec_for picks the models the schema rules use.
            if len(self._checks) >= MAX_CHECKS:
                self._checks.clear()  # a capture of ever new version strings: start over
            check = self._checks[key] = _built(version, era, kind, method, direction)
        return check

    def accepts(
        self,
        text: str | None,
        era: str | None,
        version: str | None,
        kind: str,
        method: str | None,
        direction: str,
    ) -> bool:
        """Whether the message with this text (``Msg.raw``) is certainly conformant."""
        check = self.check(era, version, kind, method, direction)
        return check is not None and check(text)


_UNBUILT: Any = object()
