"""Messages that repeat but for their numbers are looked at for secrets twice, then
known plain; a secret that only its digits make is still found."""

from __future__ import annotations

import json

import pytest

from mcpeek.inspector.capture import redact_detect, redact_signs, redact_text
from mcpeek.inspector.capture.redact import Redactor
from mcpeek.inspector.capture.redact_detect import SecretDetector
from mcpeek.inspector.capture.redact_repeats import LONGEST, REMEMBERED, Repeats
from mcpeek.inspector.capture.redact_text import redact_message
from mcpeek.inspector.records import Msg
from tests.inspector.capture.test_redact import JSON_SECRETS

# Secrets whose pattern holds digits of its own (GitLab's runner token, OpenAI's key).
DIGIT_LITERALS = [
    "GR1348941" + "aB3dE5fG7hI9jK1lM3nO",
    "sk-" + "aB3dE5fG7hI9jK1lM3nO" + "T3BlbkFJ" + "pQ5rS7tU9vW1xY3zA5bC",
]
PAD = "x" * 40  # a run of token characters: every message is a candidate


def _message(ident: int, value: str = "") -> str:
    params = {"pad": PAD, "value": value} if value else {"pad": PAD}
    return json.dumps({"jsonrpc": "2.0", "id": ident, "method": "bench/echo", "params": params})


def _recorded(raw: str, detector: SecretDetector, repeats: Repeats) -> str | None:
    """What a Redactor records of ``raw`` (None: as it is)."""
    key = repeats.key(raw)
    if key is not None and repeats.plain(key):
        return None
    return redact_message(raw, detector, repeats, key)


def _digits_shifted(text: str, by: int) -> str:
    return "".join(str((int(c) + by) % 10) if c.isdigit() else c for c in text)


@pytest.fixture(scope="module")
def detector() -> SecretDetector:
    return SecretDetector()


def test_a_message_that_repeats_but_for_its_id_is_scanned_twice_then_not(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    scanned: list[str] = []
    real_scan = redact_text.scan

    def counting_scan(text: str) -> object:
        scanned.append(text)
        return real_scan(text)

    monkeypatch.setattr(redact_text, "scan", counting_scan)
    redactor = Redactor()
    messages = [_message(ident) for ident in range(1, 10)]
    records = [Msg(dir="c2s", ch="stdio", raw=m) for m in messages]
    for record in records:
        redactor.record(record)
    assert [r.raw for r in records] == messages  # each recorded as it came
    assert scanned == messages[:2]  # the third and later were known plain by their key
    # Another shape is scanned again: a longer id, another value.
    for raw in (_message(10), _message(1, "other")):
        redactor.record(Msg(dir="c2s", ch="stdio", raw=raw))
    assert len(scanned) == 4


@pytest.mark.parametrize("secret", JSON_SECRETS + DIGIT_LITERALS, ids=lambda s: s[:12])
def test_a_secret_after_messages_like_it_but_for_digits_is_still_redacted(
    detector: SecretDetector, secret: str
) -> None:
    # Its look-alikes first: the same message with every digit made 0, or another digit.
    repeats = Repeats()
    variants = [_digits_shifted(secret, by) for by in (1, 2, 3)]
    variants.append("".join("0" if c.isdigit() else c for c in secret))
    for ident, variant in enumerate(variants * 2, start=1):
        expected = redact_message(_message(ident, variant), detector)
        assert _recorded(_message(ident, variant), detector, repeats) == expected
    real = _message(99, secret)
    redacted = _recorded(real, detector, repeats)
    assert redacted == redact_message(real, detector)
    assert redacted is not None
    assert secret.splitlines()[1 if "PRIVATE" in secret else 0] not in redacted


def test_a_member_named_like_a_credential_is_redacted_each_time(
    detector: SecretDetector,
) -> None:
    repeats = Repeats()
    for ident in range(1, 6):
        raw = json.dumps({"jsonrpc": "2.0", "id": ident, "params": {"password": f"hunter{ident}"}})
        redacted = _recorded(raw, detector, repeats)
        assert redacted is not None
        assert f"hunter{ident}" not in redacted


def test_only_short_ascii_messages_have_a_key() -> None:
    assert Repeats.key('{"id":12,"x":"a9"}') == b'{"id":00,"x":"a0"}'
    assert Repeats.key('{"x":"météo"}') is None
    assert Repeats.key('{"x":"' + "y" * LONGEST + '"}') is None


def test_the_messages_kept_are_bounded(detector: SecretDetector) -> None:
    repeats = Repeats()
    for shape in range(3 * REMEMBERED):
        value = "v" + "".join("bcdfjmnqrv"[int(c)] for c in str(shape))  # no digit, no literal
        for ident in (1, 2, 3):
            assert _recorded(_message(ident, value), detector, repeats) is None
        assert repeats.plain(Repeats.key(_message(4, value)) or b"")
    assert len(repeats._plain) <= REMEMBERED
    assert len(repeats._seen) <= REMEMBERED


def test_the_detector_answers_for_every_digit_only_without_a_zeroed_literal(
    detector: SecretDetector,
) -> None:
    zeroed = Repeats.key(_message(1, "GR0000000 and more")) or b""
    marks = b""  # not made: the detector makes it
    assert not detector.selects_none_any_digits(zeroed, marks)
    assert detector.selects_none_any_digits(Repeats.key(_message(1, "plain")) or b"", marks)
    assert not detector.selects_none_any_digits(b'{"k":"-----BEGIN PRIVATE KEY-----"}', marks)
    # A shape (Telegram's: a colon, then 35 token characters) is looked for too.
    telegram = Repeats.key(_message(1, "00000000:" + "A" * 35)) or b""
    assert not detector.selects_none_any_digits(telegram, marks)


def test_a_key_the_detector_cannot_answer_for_is_not_asked_again(
    detector: SecretDetector, monkeypatch: pytest.MonkeyPatch
) -> None:
    # "API" holds Artifactory's literal "AP": no key with it is ever plain, and the
    # detector's answer (5 µs) is not asked for again with every message of it.
    asked: list[bytes] = []
    answer = detector.selects_none_any_digits

    def asking(zeroed: bytes, marks: bytes) -> bool:
        asked.append(zeroed)
        return answer(zeroed, marks)

    monkeypatch.setattr(detector, "selects_none_any_digits", asking)
    repeats = Repeats()
    messages = [_message(ident, "the API") for ident in range(1, 8)]
    assert [_recorded(m, detector, repeats) for m in messages] == [None] * 7
    assert len(asked) == 1
    assert not repeats.plain(Repeats.key(messages[0]) or b"")


def test_nothing_else_that_decides_holds_a_digit() -> None:
    # Why a message's digits cannot change whether it holds a secret, but for the
    # literals (zeroed too): a digit in any of these would break the key's promise.
    from mcpeek.inspector.capture import redact_text, redact_words

    texts = [
        *redact_words.PROTOCOL_WORDS,
        *redact_text._FIELD_HINTS,
        '"progresstoken"',
        redact_words._NAMESPACE.decode(),
        "PRIVATE KEY",
        redact_signs.URL_PASSWORD.pattern,
        redact_detect._PRIVATE_KEY_BLOCK.pattern,
    ]
    assert [t for t in texts if any(c.isdigit() for c in t)] == []
