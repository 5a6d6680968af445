"""Secrets out of recorded texts: JSON-RPC messages, request targets, form bodies.

Each function returns the redacted text, or ``None`` when there was nothing to
redact (the common case, decided as cheaply as possible). A JSON message stays
valid JSON: only the string literals that hold a secret are rewritten, every
other byte of the message is kept as it crossed the wire.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import unquote_plus

import msgspec

from mcpeek.inspector.capture.redact_detect import SecretDetector, scan
from mcpeek.inspector.capture.redact_repeats import Repeats
from mcpeek.inspector.capture.redact_rules import (
    MARKER_PREFIX,
    OAUTH_PARAMS,
    STRUCTURAL_FIELDS,
    is_secret_field,
    is_secret_param,
    marker,
)

# A message can only have a member named like a credential if its text holds
# one of these (lower-cased); most hold none, and skip decoding.
_FIELD_HINTS = ("passw", "pwd", "secret", "token", "key", "credential", "auth", "cookie", "code")
# A JSON string literal, as an unrolled loop (20 times faster in ``re`` on a
# long string than an alternation per character).
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_AFTER_KEY = re.compile(r"\s*:")
_MEMBER_NAME = re.compile(r'"([^"\\]{1,100})"\s*:')
_NAMES_ONLY = 64 * 1024
# A URL's query or fragment anywhere in a text: after "?" or "#", up to the end of
# the URL (a space, a quote, "<" or ">") or its fragment. Its parameters are read
# as a request target's (redact_pairs).
_URL_PARAMS = re.compile(r"(?<=[?#])[^\s\"'<>#]+")
# application/x-www-form-urlencoded, as OAuth token endpoints take and some answer.
_FORM = re.compile(r"[\w.~%+-]+=[^&\s]*(?:&[\w.~%+-]+=[^&\s]*)*")


def redact_message(
    raw: str, detector: SecretDetector, repeats: Repeats | None = None, key: bytes | None = None
) -> str | None:
    """``raw`` (a JSON-RPC message, or any JSON body) with its secrets replaced
    inside their string literals; structural members (``id``, ``method``,
    ``progressToken``…) are never touched. ``repeats``: the messages known to
    hold nothing whatever their digits (see .redact_repeats), told what this one
    teaches, ``key`` being its key there (looking it up first is the caller's part:
    see Redactor.record)."""
    # Scanning the raw text first keeps decoding for messages with a secret;
    # escapes ("\/", "\u0041") could hide one from it (a URL's "://" written
    # ":\/\/", as PHP writes it), not from the strings: text with an escape has
    # its strings scanned whatever its own scan says, and its patterns run only
    # if it has none.
    scanned = scan(raw)
    named = _has_field_hint(raw, scanned[3])
    scan_strings = "\\" in raw or (bool(scanned[0]) and bool(detector.spans(raw, scanned)))
    if not named and not scan_strings:
        if repeats is not None and key is not None:
            repeats.learn(key, scanned, detector)
        return None
    secrets: set[str] = set()
    keep: set[str] = set()
    try:
        document = msgspec.json.decode(raw)
        oauth = not (isinstance(document, dict) and "jsonrpc" in document)
        _collect(document, secrets, keep, oauth=oauth, top=True)
    except msgspec.DecodeError:  # not JSON: redact it as text
        return detector.redact(raw) if scan_strings else None
    except RecursionError:  # nested too deeply to walk: a credential's member is
        # found by its place alone (see literal), and nothing is known to keep
        secrets.clear()
        keep.clear()
        oauth = '"jsonrpc"' not in raw
    else:
        if not secrets and not scan_strings:
            return None
    secret_value_at = -1  # where the value of a member named like a credential begins

    def literal(match: re.Match[str]) -> str:
        nonlocal secret_value_at
        text = match.group()
        value = text[1:-1]
        if "\\" in value:
            value = json.loads(text)
        after_key = _AFTER_KEY.match(raw, match.end())
        if after_key is not None:  # a member's name: its value may be a secret
            named = _names_a_credential(value, oauth=oauth)
            secret_value_at = after_key.end() if named else -1
        elif secret_value_at >= 0 and not raw[secret_value_at : match.start()].strip():
            # By its place: a name given twice ({"password": "a", "password": "b"})
            # decodes to its last value only, and a document too deep to walk to none.
            secret_value_at = -1
            return f'"{marker(value)}"'
        else:
            secret_value_at = -1
        if value in keep:
            return text
        if value in secrets and after_key is None:
            return f'"{marker(value)}"'
        redacted = detector.redact(value) if scan_strings else None
        if redacted is None:
            return text
        return json.dumps(redacted, ensure_ascii=False)

    out = _STRING.sub(literal, raw)
    return None if out == raw else out


def _has_field_hint(raw: str, segments: list[tuple[int, int]] | None = None) -> bool:
    """Whether ``raw`` may have a member named like a credential (``segments``: its
    stretches between blobs, if known; see .redact_runs.between_blobs)."""
    if len(raw) > _NAMES_ONLY:
        # Nine substring searches cost milliseconds per megabyte: in a big
        # message, only the member names are searched.
        # Each name once: a big message repeats a few (an array of 200k objects
        # made 5 million tests of 600k names).
        if segments is None:
            names = set(_MEMBER_NAME.findall(raw))
        else:
            # Only between the blobs: a name's quotes and colon are no blob's
            # characters, and a blob is far longer than a name, so every name
            # lies in one stretch, where the search finds the same ones.
            names = set()
            for start, end in segments:
                if start < end:
                    names.update(_MEMBER_NAME.findall(raw, start, end))
        named = {n.lower() for n in names if n not in STRUCTURAL_FIELDS}
        return any(hint in name for name in named for hint in _FIELD_HINTS)
    # "progressToken" is in most requests' _meta and every progress
    # notification, and structural: it alone is no reason to decode.
    lowered = raw.lower()
    if '"progresstoken"' in lowered:
        lowered = lowered.replace('"progresstoken"', "")
    # Spelled out, not a loop over _FIELD_HINTS: this runs for every message.
    return (
        "passw" in lowered
        or "pwd" in lowered
        or "secret" in lowered
        or "token" in lowered
        or "key" in lowered
        or "credential" in lowered
        or "auth" in lowered
        or "cookie" in lowered
        or "code" in lowered
    )


def _collect(node: Any, secrets: set[str], keep: set[str], *, oauth: bool, top: bool) -> None:
    """Gather the values of members named like credentials (``secrets``) and of
    structural members (``keep``)."""
    if isinstance(node, list):
        for item in node:
            _collect(item, secrets, keep, oauth=oauth, top=top)
        return
    if not isinstance(node, dict):
        return
    for name, value in node.items():
        if name in STRUCTURAL_FIELDS:
            if isinstance(value, str) and (top or name not in ("id", "method", "jsonrpc")):
                keep.add(value)
            elif not isinstance(value, str):
                _collect(value, secrets, keep, oauth=oauth, top=False)
        elif _names_a_credential(name, oauth=oauth):
            secrets.update(s for s in _strings(value) if s)
        else:
            _collect(value, secrets, keep, oauth=oauth, top=False)


def _names_a_credential(name: str, *, oauth: bool) -> bool:
    """Whether a member called ``name`` holds a credential (``oauth``: in a document
    that is no JSON-RPC message, the OAuth parameters too); never a structural one."""
    return name not in STRUCTURAL_FIELDS and (
        is_secret_field(name) or (oauth and name in OAUTH_PARAMS)
    )


def _strings(node: Any) -> Iterator[str]:
    if isinstance(node, str):
        yield node
    elif isinstance(node, list):
        for item in node:
            yield from _strings(item)
    elif isinstance(node, dict):
        for item in node.values():
            yield from _strings(item)


def redact_params(text: str, detector: SecretDetector, *, semicolons: bool = False) -> str | None:
    """A query string or form body (``a=1&b=2``) with the values of parameters
    named like credentials replaced, then any other secret the detector finds.
    The rest is kept to the byte (order, encoding, empty values). ``semicolons``:
    a query, where some servers part parameters by ";" too (a form's are "&" only)."""
    out = redact_pairs(text, semicolons=semicolons)
    redacted = detector.redact(out or text)
    return redacted if redacted is not None else out


def redact_pairs(
    text: str, *, semicolons: bool = False, hide: Callable[[str], str] = marker
) -> str | None:
    """:func:`redact_params` by name alone, each secret value given to ``hide``; None
    when nothing was replaced. A credential's value runs to the next "&": a ";"
    in it stays hidden. After a ";" in another value, a credential's name
    (``a=1;access_token=…``) hides the rest of that value."""
    changed = False
    pieces = []
    for piece in text.split("&"):
        name, sep, value = piece.partition("=")
        redacted = _secret_param(name, value, hide) if sep else None
        start = len(name) + 1
        while redacted is None and semicolons and (cut := piece.find(";", start)) >= 0:
            name, sep, value = piece[cut + 1 :].partition("=")
            if sep and (found := _secret_param(name, value, hide)) is not None:
                redacted = piece[: cut + 1] + found
            start = cut + 1
        changed = changed or redacted is not None
        pieces.append(redacted or piece)
    return "&".join(pieces) if changed else None


def may_hold_url_params(text: str) -> bool:
    """Whether ``text`` may hold a URL with parameters (a ``Location``, a ``Referer``):
    one test at C speed for the usual header values, which hold none."""
    return "=" in text and ("?" in text or "#" in text)


def redact_url_params(text: str) -> str | None:
    """``text`` (a header value) with the values of the URL parameters named like
    credentials replaced, in a query or a fragment: an OAuth redirect's ``code``,
    an ``access_token`` after ``#``; None if it holds none."""
    changed = False

    def replaced(match: re.Match[str]) -> str:
        nonlocal changed
        redacted = redact_pairs(match[0], semicolons=True)
        changed = changed or redacted is not None
        return redacted or match[0]

    out = _URL_PARAMS.sub(replaced, text)
    return out if changed else None


def _secret_param(name: str, value: str, hide: Callable[[str], str] = marker) -> str | None:
    """``name=value`` with its value hidden (its marker) when ``name`` is a
    credential's (a query's, a form's); None when it is not, the value empty, or
    a marker already (a capture recorded again keeps its markers)."""
    if not value or not is_secret_param(unquote_plus(name).strip()):
        return None  # (most parameters: the name alone decides, the value is not decoded)
    text = unquote_plus(value)
    return None if text.startswith(MARKER_PREFIX) else f"{name}={hide(text)}"


def redact_target(target: str, detector: SecretDetector) -> str | None:
    """A request target (``/mcp?api_key=...``) with its credentials replaced."""
    path, sep, query = target.partition("?")
    if not sep:
        return detector.redact(target)
    redacted_query = redact_params(query, detector, semicolons=True)
    redacted_path = detector.redact(path)
    if redacted_query is None and redacted_path is None:
        return None
    return f"{redacted_path or path}?{redacted_query or query}"


def redact_body(body: str, detector: SecretDetector) -> str | None:
    """A non-JSON body: form-encoded ones by parameter name, any other as text."""
    if _FORM.fullmatch(body.strip()):
        return redact_params(body, detector)
    return detector.redact(body)
