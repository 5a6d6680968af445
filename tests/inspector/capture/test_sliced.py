"""A long ASCII text is written a slice at a time, to the same bytes as in one piece."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpeek.inspector.capture import CaptureWriter, read_records, sliced
from mcpeek.inspector.records import Event, Http, Msg, SeqRecord

# Small sizes, so that the slice boundaries fall everywhere, escapes included.
SMALL_SLICED = 64
SMALL_SLICE = 7


@pytest.fixture
def small_slices(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sliced, "SLICED", SMALL_SLICED)
    monkeypatch.setattr(sliced, "SLICE", SMALL_SLICE)


def batch(texts: list[str]) -> list[SeqRecord]:
    """Each text as a message, between small records of other kinds."""
    records: list[SeqRecord] = [Event(event="note", message="first")]
    for i, text in enumerate(texts):
        records.append(Msg(dir="c2s", ch=f"x{i}", raw=text, partial=i % 2 == 1, made="edit"))
        records.append(Http(x=f"x{i}", phase="end", reason="complete"))
    return records


def capture_bytes(path: Path, records: list[SeqRecord]) -> list[bytes]:
    """The record lines written (the header line left out)."""
    with CaptureWriter(path, transport="http", target="t", redact=False, force=True) as writer:
        writer.write_many(records)
    return path.read_bytes().splitlines(keepends=True)[1:]


def expected_lines(records: list[SeqRecord]) -> list[bytes]:
    return msgspec.json.Encoder().encode_lines(records).splitlines(keepends=True)


ascii_text = st.text(
    alphabet=st.sampled_from(list('ab"\\\n\t\x00\x1f\x7f/{}:, ')), min_size=0, max_size=300
)


@settings(max_examples=60, deadline=None)
@given(texts=st.lists(ascii_text, min_size=1, max_size=4))
def test_same_bytes_as_one_encode(
    tmp_path_factory: pytest.TempPathFactory, texts: list[str]
) -> None:
    path = tmp_path_factory.mktemp("c") / "c.jsonl"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sliced, "SLICED", SMALL_SLICED)
        patch.setattr(sliced, "SLICE", SMALL_SLICE)
        records = batch(texts)
        lines = capture_bytes(path, records)
    assert lines == expected_lines(records)
    _, read, problems = read_records(path)
    assert problems == []
    assert [r.raw for r in read if isinstance(r, Msg)] == texts


def test_only_long_ascii_texts_are_sliced(small_slices: None) -> None:
    long = "x" * SMALL_SLICED
    assert sliced.is_sliced(Msg(dir="c2s", ch="x1", raw=long))
    assert not sliced.is_sliced(Msg(dir="c2s", ch="x1", raw=long[:-1]))
    assert not sliced.is_sliced(Msg(dir="c2s", ch="x1", raw=long + "é"))  # may not encode
    assert not sliced.is_sliced(Msg(dir="c2s", ch="x1", raw_b64="eA=="))
    assert not sliced.is_sliced(Event(event="note", message=long))


def test_a_non_ascii_long_text_is_written_whole(tmp_path: Path, small_slices: None) -> None:
    records = batch(["é" * 100, "y" * 100])
    assert capture_bytes(tmp_path / "c.jsonl", records) == expected_lines(records)


def test_a_batch_that_fails_to_encode_writes_nothing(tmp_path: Path, small_slices: None) -> None:
    path = tmp_path / "c.jsonl"
    with CaptureWriter(path, transport="http", target="t", redact=False) as writer:
        size = path.stat().st_size
        bad = Msg(dir="s2c", ch="x1", raw="\ud800 lone surrogate")
        with pytest.raises(UnicodeEncodeError):
            writer.write_many([Msg(dir="c2s", ch="x1", raw="z" * 100), bad])
        assert path.stat().st_size == size
        assert writer.record_count == 0
