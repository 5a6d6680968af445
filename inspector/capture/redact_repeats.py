"""Messages recorded before but for their numbers: no second look for secrets.

A proxy records the same messages again and again, but for their numbers:
each request's id, a progress notification's progress, a ping. Redacting one
that holds a run of 16 token characters (a hex id, a padding, a hash) costs
about 7 µs, most of it looking for the plugins' literals, and the two of a
request/response pair were three quarters of the stdio relay's CPU.

A short ASCII message is keyed by its bytes with each digit made "0". Once a
message of a key was found to hold nothing to redact (and the key came twice:
a message that never repeats pays only for its key and a set's insert), and
the detector says that no pattern would run on any message of that key
(:meth:`~.redact_detect.SecretDetector.selects_none_any_digits`), the others
are recorded as they are after one set look-up.

Nothing else that decides depends on which digits a message holds: digits are
all token characters (the same runs), no protocol word, field-name hint,
private key header or URL sign holds one, and a message with an escape or a
member named like a credential is never keyed as plain.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, AnyStr

from mcpeek.inspector.capture.redact_detect import ZERO_DIGITS

if TYPE_CHECKING:
    from mcpeek.inspector.capture.redact_detect import Scan, SecretDetector

# Texts kept in each set, and the longest kept (a message's whole window is its whole
# text up to this length, see .redact_detect): at most 1 MiB a set.
REMEMBERED = 256
LONGEST = 4096


def remember(plain: set[AnyStr], text: AnyStr) -> None:
    """Keep ``text``, found to hold nothing to redact, in ``plain`` (bounded: a set
    that is full is emptied, should the texts change every time)."""
    if len(text) <= LONGEST:
        if len(plain) >= REMEMBERED:
            plain.clear()
        plain.add(text)


class Repeats:
    """The keys of the messages that hold nothing to redact, whatever their digits."""

    def __init__(self) -> None:
        self._seen: set[bytes] = set()  # keys of a plain message seen once
        self._plain: set[bytes] = set()
        # Keys the detector cannot answer for (a literal's zeroed form is in them:
        # "AP" of "API"): not asked again, at 5 µs a time, for every message of them.
        self._mixed: set[bytes] = set()

    @staticmethod
    def key(raw: str) -> bytes | None:
        """The key of ``raw``; None for a long or non-ASCII one (never kept)."""
        if len(raw) > LONGEST or not raw.isascii():
            return None
        return raw.encode("ascii").translate(ZERO_DIGITS)

    def plain(self, key: bytes) -> bool:
        """Whether every message of ``key`` holds nothing to redact."""
        return key in self._plain

    def learn(self, key: bytes, scanned: Scan, detector: SecretDetector) -> None:
        """A message of ``key`` held nothing to redact, no escape and no member named
        like a credential (``scanned``: its scan)."""
        if key in self._mixed:
            return
        if key not in self._seen:
            remember(self._seen, key)
            return
        windows, _, marks, _ = scanned
        if not windows or detector.selects_none_any_digits(key, marks):
            remember(self._plain, key)
        else:
            remember(self._mixed, key)
