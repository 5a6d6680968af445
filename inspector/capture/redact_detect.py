"""Recognisable secrets in free text, found by Yelp's ``detect-secrets`` plugins.

The plugins are the regex-based ones whose patterns are specific to a kind of
credential (AWS access keys, GitHub/GitLab/Slack/Stripe/OpenAI… tokens, JWTs,
private keys, passwords in URLs). Left out: the entropy and keyword plugins,
which flag ordinary identifiers and hashes (names are our own rules, see
:mod:`mcpeek.inspector.capture.redact_rules`), and the public-IP one.

Running two dozen regexes over every message would cost far more than relaying
it, so :func:`candidates` comes first: the plugins only see the windows of
text that may hold a secret, and most messages have none.
"""

from __future__ import annotations

import importlib
import re

from mcpeek.inspector.capture.redact_literals import alternation, required_literals
from mcpeek.inspector.capture.redact_rules import marker
from mcpeek.inspector.capture.redact_runs import (
    TOKEN_CHARS_ASCII,
    between_blobs,
    runs_outside_blobs,
)
from mcpeek.inspector.capture.redact_signs import candidate_between_blobs, other_candidate
from mcpeek.inspector.capture.redact_spans import merged, secret_span
from mcpeek.inspector.capture.redact_words import other_run, protocol_word

# Module and class of each plugin used. Imported when a detector is built,
# not with this module: detect-secrets takes a few hundred milliseconds to
# import, which the commands that only read captures need not pay.
PLUGINS = (
    ("aws", "AWSKeyDetector"),
    ("artifactory", "ArtifactoryDetector"),
    ("azure_storage_key", "AzureStorageKeyDetector"),
    ("basic_auth", "BasicAuthDetector"),
    ("discord", "DiscordBotTokenDetector"),
    ("github_token", "GitHubTokenDetector"),
    ("gitlab_token", "GitLabTokenDetector"),
    ("jwt", "JwtTokenDetector"),
    ("mailchimp", "MailchimpDetector"),
    ("npm", "NpmDetector"),
    ("openai", "OpenAIDetector"),
    ("private_key", "PrivateKeyDetector"),
    ("pypi_token", "PypiTokenDetector"),
    ("sendgrid", "SendGridDetector"),
    ("slack", "SlackDetector"),
    ("square_oauth", "SquareOAuthDetector"),
    ("stripe", "StripeDetector"),
    ("telegram_token", "TelegramBotTokenDetector"),
    ("twilio", "TwilioKeyDetector"),
)


def detector_name() -> str:
    """``detect-secrets X.Y.Z``, as the capture header records it."""
    from importlib.metadata import version  # slow to import: only for writers

    return f"detect-secrets {version('detect-secrets')}"


def plugin_patterns() -> list[re.Pattern[str]]:
    """The compiled patterns of the plugins (each plugin's ``denylist``)."""
    patterns: list[re.Pattern[str]] = []
    for module, name in PLUGINS:
        plugin = getattr(importlib.import_module(f"detect_secrets.plugins.{module}"), name)
        patterns.extend(plugin.denylist)
    return patterns


# Every secret those plugins find overlaps a run of 16 or more token
# characters (the shortest, an AWS key id, is 20; 16 leaves a margin for
# tokens cut by a character outside the class, as "." cuts a JWT), but for a
# private-key header and a password in a URL. "/" is left out of the class:
# with it, every method name ("notifications/initialized") and URL path made
# a run, and the Base64 secrets that hold one are long enough to keep a run of
# 16 between two (or are caught by their member's name). Runs are found in
# the text mapped through a table, at C speed (a regex costs ten times more):
# token characters become 1, the rest 0; the second table also maps "." to 2
# and ":" to 3, the separators of the two patterns that have no literal (see
# _SHAPES). A short text is mapped once, through the second, for its runs and
# shapes; a long ASCII one slice by slice (.redact_runs), any other through the first.
_RUN_TABLE = "".join("\x01" if chr(i) in TOKEN_CHARS_ASCII else "\x00" for i in range(128))
_SHAPE_TABLE = "".join(
    "\x01" if chr(i) in TOKEN_CHARS_ASCII else {".": "\x02", ":": "\x03"}.get(chr(i), "\x00")
    for i in range(128)
)
_RUN = "\x01" * 16
# The same for ASCII text as bytes: bytes.translate maps a byte by a lookup, where
# str.translate asks the table for each character (three times faster on 200).
_SHAPE_BYTES = _SHAPE_TABLE.encode("ascii") + bytes(128)
_RUN_BYTES = _RUN.encode("ascii")
# Each digit made "0" (bytes.translate): texts that differ only in their numbers.
ZERO_DIGITS = bytes.maketrans(b"123456789", b"000000000")
# How much text around a run the plugins see: some look for a keyword before
# the secret ("aws ... key ... '<40 characters>'").
_CONTEXT = 64
# A longer run is a Base64 blob (an image, a file): what it encodes cannot be
# recognised, and scanning it would cost milliseconds per megabyte.
MAX_RUN = 8192
# Texts up to this size are scanned whole once they hold a run.
_WHOLE = 4096
# The two plugin patterns without a literal to look for ran on every text with
# a run, and cost more than the rest of the check. In ASCII text each needs
# this shape in the mapped bytes first (found at C speed): Discord's token is
# runs of 24+, 6 and 27+ token characters joined by dots, Telegram's a colon
# and then 35 of them. Keyed by the pattern's text: a pattern a later
# detect-secrets words otherwise runs on every text with a run, as before.
_SHAPES = {
    r"[MNO][a-zA-Z\d_-]{23,25}\.[a-zA-Z\d_-]{6}\.[a-zA-Z\d_-]{27}": (
        "\x01" * 24 + "\x02" + "\x01" * 6 + "\x02" + "\x01" * 27
    ),
    r"\d{8,10}:[0-9A-Za-z_-]{35}": "\x03" + "\x01" * 35,
}


# The windows, whether the text is ASCII, a short text's map (see scan), and a long
# ASCII text's stretches between blobs (see .redact_runs.between_blobs).
Scan = tuple[list[tuple[int, int]], bool, bytes, list[tuple[int, int]] | None]


def candidates(text: str) -> list[tuple[int, int]]:
    """The parts of ``text`` that may hold a secret, as (start, end) windows;
    ``[]`` for most text, after one pass at C speed."""
    return scan(text)[0]


def scan(text: str) -> Scan:
    """:func:`candidates`, whether ``text`` is ASCII, for a short text its map
    through ``_SHAPE_BYTES`` if ASCII (``b""`` for any other), for a long ASCII one
    the stretches between its blobs (``None`` for any other)."""
    ascii_text = text.isascii()
    short = len(text) <= _WHOLE
    if ascii_text and not short:
        segments = between_blobs(text)
        return _long_windows(text, segments), True, b"", segments
    if ascii_text:
        encoded = text.encode("ascii")
        marks = encoded.translate(_SHAPE_BYTES)
        if _RUN_BYTES not in marks or not other_run(encoded):  # (the protocol's own words)
            return ([(0, len(text))] if other_candidate(text) else []), True, b"", None
        return [(0, len(text))], True, marks, None  # one window would hold it all anyway
    # Not ASCII: characters past the table are kept as they are, never a 1.
    if _RUN not in text.translate(_SHAPE_TABLE if short else _RUN_TABLE) or (
        short and not other_run(text.encode("utf-8", "surrogatepass"))
    ):
        return ([(0, len(text))] if other_candidate(text) else []), False, b"", None
    return [(0, len(text))], False, b"", None  # a run's end is not found by looking for a 0


def _long_windows(text: str, segments: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The windows of a long ASCII text: around each run (not a blob's), with
    some context."""
    if candidate_between_blobs(text, segments):
        return [(0, len(text))]
    windows: list[tuple[int, int]] = []
    for at, end in runs_outside_blobs(text, segments=segments):
        if protocol_word(text, at, end):
            continue
        window = (max(0, at - _CONTEXT), min(len(text), end + _CONTEXT))
        if end - at <= MAX_RUN:
            if windows and window[0] <= windows[-1][1]:
                windows[-1] = (windows[-1][0], window[1])
            else:
                windows.append(window)
    return windows


# The detector names the header line of a private key; the whole block goes.
_PRIVATE_KEY_BLOCK = re.compile(
    r"-----BEGIN[A-Z ]*PRIVATE KEY( BLOCK)?-----.*?(-----END[A-Z ]*PRIVATE KEY( BLOCK)?-----|\Z)",
    re.DOTALL,
)


class SecretDetector:
    """Finds and replaces the secrets in a text. The plugins hold no state
    between calls: one detector serves a whole recording."""

    def __init__(self) -> None:
        # The private-key patterns find a header line only: the blocks are found whole.
        self._patterns = [p for p in plugin_patterns() if "PRIVATE KEY" not in p.pattern]
        # Which patterns a literal lets run: each pattern runs only if the text
        # holds one of its required literals (lower-cased for a case-insensitive
        # pattern, tested on the lower-cased text); a pattern without any
        # always runs.
        self._always: list[int] = []
        self._shaped: list[tuple[int, bytes]] = []  # always, but for ASCII without the shape
        by_literal: dict[tuple[str, bool], list[int]] = {}
        for i, regex in enumerate(self._patterns):
            literals = required_literals(regex)
            if not literals and regex.pattern in _SHAPES:
                self._shaped.append((i, _SHAPES[regex.pattern].encode("ascii")))
            elif not literals:
                self._always.append(i)
            for literal in literals:
                key = (literal, bool(regex.flags & re.IGNORECASE))
                by_literal.setdefault(key, []).append(i)
        # Lower-cased literals are tested on the lower-cased text; one search for
        # any of the others rules most texts out before testing them one by one.
        self._lower = [(lit, tuple(ix)) for (lit, lower), ix in by_literal.items() if lower]
        self._cased = [(lit, tuple(ix)) for (lit, lower), ix in by_literal.items() if not lower]
        self._gate = re.compile(alternation([lit for lit, _ in self._cased]))
        # The same literals with each digit made "0", for selects_none_any_digits.
        self._gate_zeroed: re.Pattern[bytes] | None = None  # (no literal past ASCII)
        self._lower_zeroed: list[bytes] = []
        if all(lit.isascii() for lit, _ in self._lower + self._cased):
            self._lower_zeroed = [lit.encode().translate(ZERO_DIGITS) for lit, _ in self._lower]
            zeroed = [lit.encode().translate(ZERO_DIGITS).decode() for lit, _ in self._cased]
            self._gate_zeroed = re.compile(alternation(zeroed).encode())

    def spans(self, text: str, scanned: Scan | None = None) -> list[tuple[int, int]]:
        """Where the secrets of ``text`` are, sorted and merged; ``[]`` at once for
        text that cannot hold one (``scanned``: its :func:`scan`, if made)."""
        windows, ascii_text, marks, _ = scanned or scan(text)
        if not windows:
            return []
        found = []
        # Windows short of the whole text mean that its scan ruled a private key out
        # (see _long_windows): a second search of a 16 MB text would cost 4.5 ms. A
        # short text's window is always the whole (and the length test is cheaper).
        whole = len(text) <= _WHOLE or windows[0] == (0, len(text))
        if whole and "PRIVATE KEY" in text:
            found = [m.span() for m in _PRIVATE_KEY_BLOCK.finditer(text)]
        selected_in = _windows_text(text, windows)
        if selected_in is not text:
            marks = b""  # the windows' own map is made if a shape is to be looked for
        for i in sorted(self._selected(selected_in, ascii_text, marks)):
            regex = self._patterns[i]
            for start, end in windows:
                found.extend(secret_span(text, m) for m in regex.finditer(text, start, end))
        return merged(found) if found else found

    def _selected(self, text: str, ascii_text: bool, marks: bytes = b"") -> set[int]:
        """The patterns that may match in ``text``: those whose literal (or shape) it
        holds. ``marks``: ``text`` mapped through ``_SHAPE_BYTES``, if already made."""
        selected = set(self._always)
        if self._shaped:
            shapes = (marks or text.encode("ascii").translate(_SHAPE_BYTES)) if ascii_text else None
            for i, shape in self._shaped:
                if shapes is None or shape in shapes:  # not ASCII: as before
                    selected.add(i)
            del shapes, marks
        if self._lower:
            lowered = text.lower()
            for literal, indices in self._lower:
                if literal in lowered:
                    selected.update(indices)
        if self._gate.search(text) is not None:
            for literal, indices in self._cased:  # substring tests, at C speed
                if literal in text:
                    selected.update(indices)
        return selected

    def selects_none_any_digits(self, zeroed: bytes, marks: bytes) -> bool:
        """Whether the patterns find nothing in every short ASCII text that is
        ``zeroed`` but for its digits (``zeroed``: its bytes with each digit made
        "0"; ``marks``: the map through ``_SHAPE_BYTES`` they share, if made). A
        literal (or its zeroed form) is in such a text only if its zeroed form is
        in ``zeroed``: none there, none selected in any of them."""
        if self._always or self._gate_zeroed is None or b"PRIVATE KEY" in zeroed:
            return False
        marks = marks or zeroed.translate(_SHAPE_BYTES)
        if any(shape in marks for _, shape in self._shaped):
            return False
        lowered = zeroed.lower()
        if any(literal in lowered for literal in self._lower_zeroed):
            return False
        return self._gate_zeroed.search(zeroed) is None

    def redact(self, text: str) -> str | None:
        """``text`` with each secret replaced by its marker (None: nothing found)."""
        spans = self.spans(text)
        if not spans:
            return None
        pieces: list[str] = []
        at = 0
        for start, end in spans:
            pieces += (text[at:start], marker(text[start:end]))
            at = end
        pieces.append(text[at:])
        return "".join(pieces)


def _windows_text(text: str, windows: list[tuple[int, int]]) -> str:
    """The text of the windows the patterns run in, joined by NULs (in no literal
    or shape). A pattern's literal lies inside its match, and a match inside a
    window: testing the literals here selects the same patterns as testing the
    whole text, without scanning a 16 MB message two dozen times for a window
    of a few hundred characters."""
    if len(windows) == 1 and windows[0] == (0, len(text)):
        return text
    return "\x00".join(text[start:end] for start, end in windows)
