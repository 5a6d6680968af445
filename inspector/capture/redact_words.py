"""The runs of token characters that the protocol spells itself, never a secret.

Every secret the detector looks for overlaps a run of 16 or more token
characters (see :mod:`mcpeek.inspector.capture.redact_detect`), so a message
without such a run skips the plugins. But every modern message has one:
``"io.modelcontextprotocol/protocolVersion"`` holds "modelcontextprotocol",
and a tools/list result holds "additionalProperties". The plugins then ran
on nearly every message the proxies recorded (10 to 15 µs each, about a tenth
of the HTTP relay's CPU). A run that is exactly one of these words (the
whole run, from one character outside the class to the next) is a name, and
no secret can be it; a run that holds one among other token characters is
still a run.

The words: the MCP schemas' member names and constants of 16 or more token
characters (a test keeps this list in step with the vendored schemas), the
reserved ``_meta`` namespace, and the JSON Schema keywords a tool's schema
may hold.
"""

from __future__ import annotations

from mcpeek.inspector.capture.redact_runs import RUN_LENGTH, RUN_TABLE

PROTOCOL_WORDS = frozenset(
    {
        # the reserved _meta namespace ("io.modelcontextprotocol/…")
        "modelcontextprotocol",
        # member names and constants of the schemas (2025-11-25, 2026-07-28)
        "additionalProperties",
        "clientCapabilities",
        "intelligencePriority",
        "modelPreferences",
        "promptsListChanged",
        "requiredCapabilities",
        "resourceSubscriptions",
        "resourceTemplates",
        "resourcesListChanged",
        "structuredContent",
        "supportedVersions",
        "toolsListChanged",
        "oauth-client-credentials",
        # JSON Schema keywords (draft 2020-12) in tools' input and output schemas
        "patternProperties",
        "unevaluatedProperties",
        "unevaluatedItems",
        "dependentRequired",
        "dependentSchemas",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "contentMediaType",
    }
)
_WORDS = frozenset(word.encode("ascii") for word in PROTOCOL_WORDS)
_LONGEST = max(map(len, PROTOCOL_WORDS))
_RUN = b"\x01" * RUN_LENGTH
_NAMESPACE = b".modelcontextprotocol/"


def protocol_word(text: str, start: int, end: int) -> bool:
    """Whether the run ``text[start:end]`` is one of :data:`PROTOCOL_WORDS` (a run
    longer than any of them is not copied to be looked up)."""
    return end - start <= _LONGEST and text[start:end] in PROTOCOL_WORDS


def other_run(encoded: bytes) -> bool:
    """Whether ``encoded`` (a text as ASCII or UTF-8) holds a run of 16 or more token
    characters that is not one of :data:`PROTOCOL_WORDS`. (A byte past ASCII is no
    token character, so the runs of the UTF-8 are those of the text.)"""
    # The namespace as most messages spell it, between two characters outside the
    # class (so the whole run), is dropped at C speed: a loop turn each cost more.
    # The loop is .redact_runs.long_runs' for one slice, without its generator and
    # slicing: through long_runs this cost 2 to 3 µs more a message (2.3 against
    # 5.2 µs on the relay benchmark's request), on the recording of every message.
    encoded = encoded.replace(_NAMESPACE, b"./")
    marks = encoded.translate(RUN_TABLE)
    at = 0
    while (at := marks.find(_RUN, at)) >= 0:  # the start of a run: the byte before is 0
        end = marks.find(b"\x00", at)
        if end < 0:
            end = len(marks)
        if encoded[at:end] not in _WORDS:
            return True
        at = end
    return False
