"""The gate's smaller verdict: a message the gate turned away whose envelope is still sound.

A message the conformance gate (:mod:`mcpeek.rules.gate`) does not accept is most
often wrong in one place only: its payload (a result missing a required field, an
odd ``_meta``). The rules about the envelope (``jsonrpc``, the id, batches, UTF-8,
pairing, ``resultType``) would all run on it and find nothing. This check proves
just that part, with a decode that skips the payload unread: the text is one
JSON object (no batch, no leading blank, UTF-8 text) whose members are exactly
``jsonrpc: "2.0"``, an integer or string ``id`` (but on a notification), a
string ``method`` (on a request or notification) and the payload member, an
object; a modern result from the server says ``resultType`` ``complete`` or
``input_required``. It is built only for a method the spec defines (a request
for a response), so that no rule about unknown methods or answered
notifications has anything to say either.

A rule whose ``envelope_gated`` kinds include the message's kind is then not
called on it (the engine also asks a response to be a plain answer, as for the
gate). Like the gate, it may only say "certainly sound": the
:class:`~mcpeek.rules.verify.VerifiedRuleEngine` compares with an engine that
has neither.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from mcpeek.rules.gate import GATED_ERAS, GATED_KINDS, MAX_BRACKETS, Check, envelope_struct
from mcpeek.rules.models import spec_for

#: What a modern server's result may say it is without result.result-type-* speaking.
CORE_RESULT_TYPE = Literal["complete", "input_required"]


class _AnyObject(msgspec.Struct, gc=False):
    """Any JSON object: every member is skipped, none is built."""


class _ModernResult(msgspec.Struct, gc=False):
    """A modern result: an object whose ``resultType`` is one of the core two."""

    resultType: CORE_RESULT_TYPE


def _envelope(kind: str, body: Any, body_required: bool) -> type[msgspec.Struct]:
    """The whole message, its payload member typed as ``body`` (see the module doc)."""
    member = {"request": "params", "notification": "params", "result": "result"}.get(kind, kind)
    return envelope_struct(kind, member, body, body_required, name="Envelope")


def build_envelope_check(
    era: str | None, version: str | None, kind: str, method: str | None, direction: str
) -> Check | None:
    """The envelope check of these messages; ``None`` when none is built for them."""
    if kind not in GATED_KINDS or era not in GATED_ERAS:
        return None
    modern = era == "modern"
    try:
        spec = spec_for(version, era)
    except (TypeError, ValueError):
        return None
    entry = spec.method(method, notification=kind == "notification")
    if entry is None:
        return None  # an unknown method, or a response to one: method.unknown and the like
    body: Any = _AnyObject
    required = True
    if kind == "result":
        if entry.result is None:
            return None
        if modern:
            if direction != "s2c":
                return None
            body = _ModernResult
    elif kind in ("request", "notification"):
        required = entry.params_required
    decode = msgspec.json.Decoder(_envelope(kind, body, required)).decode

    def check(text: str | None) -> bool:
        # Not UTF-8 (kept as base64), a batch or a member of one, leading blanks: the rules.
        if text is None or text[:1] != "{":
            return False
        # Nested deeper than a decode into Python values goes (the rules' careful
        # decode would then find no envelope at all): the rules.
        if len(text) > 2 * MAX_BRACKETS and text.count("{") + text.count("[") > MAX_BRACKETS:
            return False
        try:
            decode(text)
        except Exception:  # a MsgspecError, or a RecursionError: not proven
            return False
        return True

    return check
