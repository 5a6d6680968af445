"""Keep credentials out of capture files.

The :class:`Redactor` rewrites the *recorded copy* of what crossed the wire,
in the capture writer, after the relay forwarded it: the forwarded bytes are
never touched. What it replaces, each by ``<redacted sha256:XXXXXXXX>`` (see
docs/capture-format.md):

- ``header``: values of headers named like credentials (Authorization,
  Cookie, X-Api-Key, X-Auth-Token, Api-Key… and any ``--redact-header``);
- ``query``: values of request-target parameters named like credentials
  (``api_key``, ``access_token``, ``code``…);
- ``form-body``: the same in form-encoded bodies (OAuth token requests);
- ``json-field``: string values of JSON members named like credentials
  (``"password"``, ``"api_key"``, an OAuth token response's ``access_token``…);
- ``secret-pattern``: recognisable secrets anywhere in messages, headers,
  targets, bodies and the server's stderr (AWS keys, GitHub, Slack, Stripe…
  tokens, JWTs, private keys), found by ``detect-secrets``.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable

from mcpeek.inspector.capture.redact_detect import SecretDetector, detector_name, scan
from mcpeek.inspector.capture.redact_repeats import Repeats, remember
from mcpeek.inspector.capture.redact_rules import MARKER_PREFIX, is_secret_header, marker
from mcpeek.inspector.capture.redact_text import (
    may_hold_url_params,
    redact_body,
    redact_message,
    redact_target,
    redact_url_params,
)
from mcpeek.inspector.records import Act, Http, Msg, Redaction, SeqRecord, Stderr, header_bytes

KINDS = ("header", "query", "form-body", "json-field", "secret-pattern")
_NAMES_REMEMBERED = 1024  # header names whose verdict a Redactor keeps


class Redactor:
    """Rewrites records in place before the writer encodes them."""

    def __init__(self, extra_headers: Iterable[str] = ()) -> None:
        self.extra_headers = frozenset(name.lower() for name in extra_headers)
        self._secret_names: dict[str, bool] = {}
        self._header_lists: dict[tuple[str, ...], tuple[tuple[str, ...], bool, bool]] = {}
        self._plain_headers = Repeats()  # header values that hold nothing, as messages
        self._plain_targets: set[str] = set()
        self._repeats = Repeats()  # messages that hold nothing, whatever their digits
        # detect-secrets takes a few hundred milliseconds to import: the detector
        # is built beside the proxy's start-up (spawning the server, listening),
        # and the first record waits for it only if it comes before that ends.
        self._built = threading.Event()
        self._detector: SecretDetector | None = None
        self._failure: BaseException | None = None
        threading.Thread(target=self._build, name="mcpeek-detector", daemon=True).start()

    def _build(self) -> None:
        try:
            self._detector = SecretDetector()
        except BaseException as exc:  # re-raised where the detector is used
            self._failure = exc
        finally:
            self._built.set()

    @property
    def detector(self) -> SecretDetector:
        detector = self._detector
        if detector is not None:  # set once whole (no lock taken once built)
            return detector
        self._built.wait()
        if self._detector is None:
            raise RuntimeError(f"the secret detector could not be built: {self._failure!r}")
        return self._detector

    def info(self) -> Redaction:
        return Redaction(kinds=list(KINDS), detector=detector_name())

    def live_message(self, data: bytes) -> bytes:
        """A live message redacted as a capture redacts it: what ``serve`` matches
        against a redacted capture (bytes that are not UTF-8 are left alone)."""
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            return data
        redacted = redact_message(text, self.detector)
        return data if redacted is None else redacted.encode("utf-8")

    def record(self, record: SeqRecord) -> None:
        """Redact ``record`` (headers excepted: :meth:`headers` does those)."""
        if isinstance(record, (Msg, Act)):  # an act record holds a message's original
            raw = record.raw
            if raw is not None:
                repeats = self._repeats
                key = repeats.key(raw)
                if key is None or not repeats.plain(key):
                    record.raw = redact_message(raw, self.detector, repeats, key) or raw
        elif isinstance(record, Http):
            if record.path is not None and record.path not in self._plain_targets:
                redacted = redact_target(record.path, self.detector)
                if redacted is None:
                    remember(self._plain_targets, record.path)
                else:
                    record.path = redacted
            if record.body is not None:
                record.body = redact_body(record.body, self.detector) or record.body
        elif isinstance(record, Stderr) and record.raw is not None:
            record.raw = self.detector.redact(record.raw) or record.raw

    def _names(self, names: tuple[str, ...]) -> tuple[tuple[str, ...], bool, bool]:
        """The lower-cased ``names`` of a header list, whether any is a
        credential's, and whether all are ASCII, remembered by the list of names:
        a client or server sends the same headers in the same order in every
        exchange (bounded, should a client send ever new ones)."""
        known = self._header_lists.get(names)
        if known is None:
            if len(self._header_lists) >= _NAMES_REMEMBERED:
                self._header_lists.clear()
            lowered = tuple([name.lower() for name in names])
            secret = any([self._is_secret(name) for name in lowered])
            known = (lowered, secret, "".join(names).isascii())
            self._header_lists[names] = known
        return known

    def _is_secret(self, lname: str) -> bool:
        """:func:`is_secret_header`, remembered: a proxy sees the same few names
        in every exchange (bounded, should a client send ever new ones)."""
        known = self._secret_names.get(lname)
        if known is None:
            if len(self._secret_names) >= _NAMES_REMEMBERED:
                self._secret_names.clear()
            known = self._secret_names[lname] = is_secret_header(lname, self.extra_headers)
        return known

    def headers(self, record: Http) -> bool:
        """Lower-case the header names of ``record`` and redact the values of
        credential headers whole, and recognisable secrets in the others.

        Returns whether the headers are now all plain ASCII (the common case):
        then they need no Base64 storing (:func:`~mcpeek.inspector.records.store_header_bytes`).
        """
        if not record.headers:
            return True
        given, values = zip(*record.headers, strict=True)  # names and values, at C speed
        names, any_secret, ascii_names = self._names(given)
        # One scan of all the values together: most records have no secret
        # there, and each value scanned alone would cost a scan each.
        joined = "\n".join(values)
        if (
            not any_secret
            and not record.headers_b64
            and not may_hold_url_params(joined)  # (a redirect's Location: by parameter)
            and self._no_secret(joined)
        ):
            record.headers = list(zip(names, values, strict=True))  # the common case
            return ascii_names and joined.isascii()
        self._redact_headers(record, names)
        return False

    def _no_secret(self, joined: str) -> bool:
        """Whether the detector finds no secret in ``joined`` (a header list's values),
        remembered for the lists that hold none whatever their digits, as messages
        are (see :mod:`.redact_repeats`): a client's or server's lists change in
        their ``Content-Length`` and ``Date`` only, exchange after exchange."""
        key = Repeats.key(joined)
        if key is not None and self._plain_headers.plain(key):
            return True
        scanned = scan(joined)
        if self.detector.spans(joined, scanned):
            return False
        if key is not None:
            self._plain_headers.learn(key, scanned, self.detector)
        return True

    def _redact_headers(self, record: Http, names: tuple[str, ...]) -> None:
        """:meth:`headers` for a record with a credential header, a secret in a
        value, a URL with parameters, or values stored in Base64."""
        assert record.headers is not None
        encoded = set(record.headers_b64 or ())
        values = header_bytes(record) if encoded else None
        secret = [self._is_secret(name) for name in names]
        others = [v for (_, v), s in zip(record.headers, secret, strict=True) if not s]
        scanning = bool(self.detector.spans("\n".join(others)))
        headers = []
        for i, (lname, (_, value)) in enumerate(zip(names, record.headers, strict=True)):
            if secret[i]:
                # A Base64-stored value is hashed as the bytes it stands for.
                headers.append((lname, marker(values[i][1] if values else value)))
                encoded.discard(i)
            elif i not in encoded and not value.startswith(MARKER_PREFIX):
                kept = value
                if may_hold_url_params(kept):
                    kept = redact_url_params(kept) or kept
                if scanning:
                    kept = self.detector.redact(kept) or kept
                headers.append((lname, kept))
            else:
                headers.append((lname, value))
        record.headers = headers
        record.headers_b64 = sorted(encoded) or None
