"""What the redaction step spends on a message with no secret: the common case."""

from __future__ import annotations

import base64
import re
from collections.abc import Iterator

from hypothesis import given
from hypothesis import strategies as st

from mcpeek.inspector.capture.redact_detect import SecretDetector, candidates
from mcpeek.inspector.capture.redact_runs import between_blobs, long_runs, runs_outside_blobs
from mcpeek.inspector.capture.redact_signs import candidate_between_blobs, other_candidate
from mcpeek.inspector.capture.redact_text import _FIELD_HINTS, _has_field_hint

# A run of token characters (a UUID, a progress token, padding) made every
# pattern without a literal run on the whole message.
ORDINARY = [
    '{"jsonrpc":"2.0","id":"123e4567-e89b-12d3-a456-426614174000","method":"tools/call",'
    '"params":{"name":"get_weather","arguments":{"city":"Paris"}}}',
    '{"jsonrpc":"2.0","id":7,"method":"bench/echo","params":{"pad":"' + "x" * 40 + '"}}',
    '{"jsonrpc":"2.0","id":7,"result":{"at":"12:30","v":"1.2.3","t":"' + "y" * 30 + '"}}',
]


class _Spy:
    """A plugin pattern that notes when it runs."""

    def __init__(self, regex: re.Pattern[str], ran: list[str]) -> None:
        self.regex = regex
        self.pattern = regex.pattern
        self.flags = regex.flags
        self.ran = ran

    def finditer(self, *args: object) -> Iterator[re.Match[str]]:
        self.ran.append(self.pattern)
        return self.regex.finditer(*args)  # type: ignore[arg-type]


def test_no_plugin_pattern_runs_on_an_ordinary_message() -> None:
    detector = SecretDetector()
    ran: list[str] = []
    detector._patterns = [_Spy(p, ran) for p in detector._patterns]  # type: ignore[misc]
    for text in ORDINARY:
        assert detector.spans(text) == []
    assert ran == []


def test_every_pattern_without_a_literal_has_a_shape() -> None:
    # Keyed by the pattern's text: a detect-secrets that words one differently
    # makes it run on every message again (sound, but slow), and this says so.
    detector = SecretDetector()
    assert detector._always == []
    assert len(detector._shaped) == 2


def test_the_field_hints_spelled_out_are_the_listed_ones() -> None:
    for hint in _FIELD_HINTS:
        assert _has_field_hint('{"my_' + hint.upper() + '":1}')
    assert not _has_field_hint('{"name":"x","_meta":{"progressToken":3}}')


def test_a_header_name_is_judged_once_per_recording(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from mcpeek.inspector.capture import redact
    from mcpeek.inspector.records import Http

    judged: list[str] = []
    real = redact.is_secret_header

    def spy(name: str, extra: frozenset[str] = frozenset()) -> bool:
        judged.append(name)
        return real(name, extra)

    monkeypatch.setattr(redact, "is_secret_header", spy)
    redactor = redact.Redactor()
    for i in range(3):
        record = Http(
            x=f"x{i}",
            phase="request",
            headers=[("Content-Type", "application/json"), ("Authorization", "Bearer t")],
        )
        redactor.headers(record)
        assert record.headers == [
            ("content-type", "application/json"),
            ("authorization", redact.marker("Bearer t")),
        ]
    assert sorted(judged) == ["authorization", "content-type"]


def test_header_values_that_differ_in_digits_only_are_not_scanned_again(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A client's or server's header lists change in their numbers only (a length, a
    date): once such values were found plain twice, the others of their shape are
    recorded without a scan; a secret in a value is scanned and redacted as ever."""
    from mcpeek.inspector.capture import redact
    from mcpeek.inspector.records import Http

    redactor = redact.Redactor()
    scanned: list[str] = []  # the values of each list the detector looked at
    real = redactor.detector.spans

    def spy(text: str, scan=None):  # type: ignore[no-untyped-def]
        scanned.append(text)
        return real(text, scan)

    monkeypatch.setattr(redactor.detector, "spans", spy)
    token = "ghp_" + "A1b2C3d4E5" * 3 + "F6g7H8"

    def record(length: int, trace: str = "t-1") -> list[tuple[str, str]]:
        headers = [
            ("Content-Type", "application/json"),
            ("Content-Length", str(length)),
            ("X-Trace", trace),
            ("Date", f"Tue, 01 Dec 2026 10:00:{length % 60:02d} GMT"),
        ]
        done = Http(x="x1", phase="response", headers=headers)
        assert redactor.headers(done) is ("ghp_" not in trace)
        return list(done.headers or ())

    assert record(120) == [
        ("content-type", "application/json"),
        ("content-length", "120"),
        ("x-trace", "t-1"),
        ("date", "Tue, 01 Dec 2026 10:00:00 GMT"),
    ]
    record(131)
    assert len(scanned) == 2  # a shape seen once is not trusted yet
    assert record(142)[1:2] == [("content-length", "142")]
    assert record(953)[3] == ("date", "Tue, 01 Dec 2026 10:00:53 GMT")
    assert len(scanned) == 2  # the same shape: not scanned again
    assert record(164, f"t-1 {token}")[2] == ("x-trace", f"t-1 {redact.marker(token)}")
    assert record(164, f"t-1 {token}")[2] == ("x-trace", f"t-1 {redact.marker(token)}")
    # Entries made lists (not the tuples the type says) are recorded all the same.
    listed = Http(x="x3", phase="request", headers=[["X-A", "1"]])  # type: ignore[list-item]
    assert redactor.headers(listed) and listed.headers == [("x-a", "1")]


def test_a_big_message_selects_patterns_by_its_windows_only() -> None:
    # A literal ("AKIA", "xox") far from any run of token characters selects no
    # pattern; a secret in a window of the same message is still found.
    detector = SecretDetector()
    ran: list[str] = []
    detector._patterns = [_Spy(p, ran) for p in detector._patterns]  # type: ignore[misc]
    filler = "AKIA xox ghp " * 20_000 + " " * 100  # beyond the windows' context
    blob = '{"jsonrpc":"2.0","id":1,"result":{"text":"' + filler + '","id":"'
    plain = blob + '01234567890123456789"}}'
    assert detector.spans(plain) == []
    assert ran == []
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0" * 2
    secret = blob + token + '"}}'
    assert detector.spans(secret) == [(len(blob), len(blob) + len(token))]
    assert ran and all("ghp" in pattern or "gh" in pattern for pattern in ran)


@given(
    st.lists(
        st.sampled_from(["a", "Z9", "_-+=", " ", ".", ":", "/", '"', "x" * 15, "y" * 17]),
        max_size=40,
    ),
    st.integers(1, 40),
)
def test_runs_found_slice_by_slice_are_the_runs_of_the_whole_text(pieces, step) -> None:  # type: ignore[no-untyped-def]
    # Runs that cross a slice's edge, begin or end on one, or span several
    # slices are found as in the whole text (a regex over it, the reference).
    text = "".join(pieces)
    expected = [m.span() for m in re.finditer(r"[A-Za-z0-9_+=-]{16,}", text)]
    assert list(long_runs(text, step)) == expected
    # A slice's start that is all run up to a quote is told apart first.
    for probe in (1, 3, 8):
        assert list(long_runs(text, step, probe=probe)) == expected


@given(
    st.lists(
        st.sampled_from(["a", "Z9", "_-+=", " ", ".", "/", "x" * 15, "y" * 17, "b/" * 20]),
        max_size=40,
    ),
    st.integers(1, 40),
)
def test_runs_outside_blobs_are_the_runs_no_blob_holds(pieces, step) -> None:  # type: ignore[no-untyped-def]
    # A blob (here 30 or more token characters and "/") hides the runs inside it,
    # and only those, however the slices cut them.
    text = "".join(pieces)
    blobs = [m.span() for m in re.finditer(r"[A-Za-z0-9_+=/-]{30,}", text)]
    expected = [
        m.span()
        for m in re.finditer(r"[A-Za-z0-9_+=-]{16,}", text)
        if not any(a <= m.start() and m.end() <= b for a, b in blobs)
    ]
    assert list(runs_outside_blobs(text, step, blob_length=30)) == expected


@given(
    st.lists(
        st.sampled_from(
            ["a", "Z9", " ", ":", "/", "@", "://", "PRIVATE", " KEY", "x" * 15, "b/" * 20]
        ),
        max_size=40,
    ),
    st.integers(1, 40),
)
def test_signs_found_between_blobs_are_those_of_the_whole_text(pieces, step) -> None:  # type: ignore[no-untyped-def]
    # A private key's header or a URL's password next to a blob, or a password
    # running on through one, is found as in the whole text.
    text = "".join(pieces)
    segments = between_blobs(text, step, blob_length=30)
    assert candidate_between_blobs(text, segments) == other_candidate(text)
    assert list(runs_outside_blobs(text, step, segments=segments)) == list(
        runs_outside_blobs(text, step, blob_length=30)
    )


@given(
    st.lists(
        st.sampled_from(['"', '":', " ", "\\", "token", "Key", "id", "x" * 60, "b/" * 60]),
        max_size=40,
    ),
)
def test_member_names_found_between_blobs_are_those_of_the_whole_text(pieces) -> None:  # type: ignore[no-untyped-def]
    # Names next to a blob, or cut short by one, are found as in the whole text
    # (blobs of 200 characters here, longer than any name, as the real ones are).
    text = "".join(pieces) + '"' + "y" * 70_000  # long enough to search names only
    segments = between_blobs(text, blob_length=200)
    names = set(re.findall(r'"([^"\\]{1,100})"\s*:', text))
    assert _has_field_hint(text, segments) == _has_field_hint(text)
    between: set[str] = set()
    for start, end in segments:
        between.update(re.findall(r'"([^"\\]{1,100})"\s*:', text[:end][start:]))
    assert between == names


def test_a_url_password_running_through_a_blob_is_found() -> None:
    blob = "x" * 40
    text = "see postgres://alice" + blob + "pw@db and more"
    segments = between_blobs(text, blob_length=30)
    assert len(segments) == 2  # the blob lies between the two
    assert candidate_between_blobs(text, segments)
    assert not candidate_between_blobs(text.replace("@", " "), segments)


def test_a_standard_base64_blob_makes_no_window_but_its_neighbours_do() -> None:
    # "/" cuts a standard Base64 blob into short runs: it made a window per run,
    # which covered the whole blob, and every selected pattern ran over it.
    blob = base64.b64encode(bytes(range(256)) * 400).decode()
    assert "/" in blob and len(blob) > 100_000
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0" * 2
    text = f'{{"data":"{blob}","text":"a token {token} here"}}'
    windows = candidates(text)
    at = text.index(token)
    assert len(windows) == 1
    (start, end) = windows[0]
    assert start <= at and at + len(token) <= end and end - start < len(token) + 200


def test_a_long_text_s_windows_come_from_its_runs() -> None:
    # Beyond the size scanned whole: windows around the runs only (a run in the
    # middle of a megabyte, one across the first 1 MiB slice's edge).
    filler = ". " * (1 << 19)
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0" * 2
    text = filler + token + filler[: (1 << 20) - len(token) - 8] + token + filler
    windows = candidates(text)
    assert len(windows) == 2
    for (start, end), at in zip(
        windows, (len(filler), text.index(token, len(filler) + 1)), strict=True
    ):
        assert start <= at and at + len(token) <= end and end - start < len(token) + 200


def test_a_header_value_list_without_a_secret_is_scanned_twice_per_recording() -> None:
    from mcpeek.inspector.capture import redact
    from mcpeek.inspector.records import Http

    redactor = redact.Redactor()
    detector = redactor.detector
    scanned: list[str] = []
    real = detector.spans

    def spy(text: str, scanned_text: object = None) -> list[tuple[int, int]]:
        scanned.append(text)
        return real(text)

    detector.spans = spy  # type: ignore[method-assign]
    plain = [("Content-Type", "application/json"), ("Accept", "*/*")]
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"  # a GitHub token's shape
    secret = [("Content-Type", "application/json"), ("X-Note", token)]
    for i in range(3):
        record = Http(x=f"x{i}", phase="request", headers=list(plain))
        assert redactor.headers(record)
        assert record.headers == [("content-type", "application/json"), ("accept", "*/*")]
        record = Http(x=f"y{i}", phase="request", headers=list(secret))
        redactor.headers(record)
        assert record.headers is not None
        assert record.headers[1][0] == "x-note" and token not in record.headers[1][1]
    # The plain list twice (a shape is trusted once it came twice: see .redact_repeats);
    # the list with a secret every time (its verdict is not kept).
    assert scanned.count("application/json\n*/*") == 2
    assert scanned.count("application/json\n" + token) >= 3


def test_a_request_target_without_a_secret_is_scanned_once_per_recording(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from mcpeek.inspector.capture import redact
    from mcpeek.inspector.records import Http

    scanned: list[str] = []
    real = redact.redact_target

    def spy(target: str, detector: SecretDetector) -> str | None:
        scanned.append(target)
        return real(target, detector)

    monkeypatch.setattr(redact, "redact_target", spy)
    redactor = redact.Redactor()
    for i in range(3):
        record = Http(x=f"x{i}", phase="request", path="/mcp?session=1")
        redactor.record(record)
        assert record.path == "/mcp?session=1"
        record = Http(x=f"y{i}", phase="request", path="/mcp?api_key=hunter2")
        redactor.record(record)
        assert record.path == "/mcp?api_key=" + redact.marker("hunter2")
    # The plain target once; the one with a secret every time (its verdict is not kept).
    assert scanned == ["/mcp?session=1"] + ["/mcp?api_key=hunter2"] * 3
