"""Recording never breaks the relay (a failing writer is reported, not raised), and
writes what one turn of the loop emitted in one go."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

from mcpeek.inspector.capture import CaptureReader, CaptureWriter
from mcpeek.inspector.pipeline import WRITTEN_AT, Recorder
from mcpeek.inspector.records import Msg, SeqRecord


def test_a_failing_writer_is_reported_not_raised(tmp_path: Path) -> None:
    writer = CaptureWriter(tmp_path / "c.jsonl", transport="stdio", target=["s"])
    writer.close()  # any later write fails
    errors: list[BaseException] = []
    recorder = Recorder(writer, on_error=errors.append)
    recorder.emit([Msg(dir="c2s", ch="stdio", raw="{}")])
    assert len(errors) == 1 and "closed" in str(errors[0])


class CountingWriter(CaptureWriter):
    """A capture writer that counts its writes (each a system call)."""

    def __init__(self, path: Path) -> None:
        super().__init__(path, transport="stdio", target=["s"])
        self.batches: list[int] = []

    def write_many(self, records: Sequence[SeqRecord]) -> None:
        self.batches.append(len(records))
        super().write_many(records)


def _raws(path: Path) -> list[str]:
    records = CaptureReader(path).records()
    return [r.raw for r in records if isinstance(r, Msg) and r.raw is not None]


async def test_the_batches_of_one_turn_of_the_loop_are_written_together_in_order(
    tmp_path: Path,
) -> None:
    writer = CountingWriter(tmp_path / "c.jsonl")
    recorder = Recorder(writer)
    first = Msg(dir="c2s", ch="stdio", raw='{"n":1}')
    recorder.emit([first])
    assert first.t > 0  # its time taken as it was emitted, not when written
    recorder.emit([Msg(dir="s2c", ch="stdio", raw='{"n":2}'), Msg(dir="c2s", ch="stdio", raw="3")])
    assert (writer.batches, recorder.recorded) == ([], 0)
    await asyncio.sleep(0)  # the end of this turn
    assert (writer.batches, recorder.recorded) == ([3], 3)
    recorder.emit([Msg(dir="s2c", ch="stdio", raw="4")])
    recorder.flush()  # the end of the traffic: written now
    recorder.flush()  # (nothing left: no write)
    await asyncio.sleep(0)
    assert writer.batches == [3, 1]
    writer.close()
    assert _raws(tmp_path / "c.jsonl") == ['{"n":1}', '{"n":2}', "3", "4"]


def test_without_a_loop_each_batch_is_written_at_once(tmp_path: Path) -> None:
    writer = CountingWriter(tmp_path / "c.jsonl")
    recorder = Recorder(writer)
    recorder.emit([Msg(dir="c2s", ch="stdio", raw="1")])
    recorder.emit([])  # (nothing to write)
    assert writer.batches == [1]


async def test_a_failure_at_the_end_of_the_turn_is_reported(tmp_path: Path) -> None:
    writer = CaptureWriter(tmp_path / "c.jsonl", transport="stdio", target=["s"])
    errors: list[BaseException] = []
    recorder = Recorder(writer, on_error=errors.append)
    recorder.emit([Msg(dir="c2s", ch="stdio", raw="{}")])
    writer.close()  # before the turn ends: its write fails
    await asyncio.sleep(0)
    assert len(errors) == 1 and "closed" in str(errors[0])


async def test_many_records_waiting_are_written_at_once(tmp_path: Path) -> None:
    """Memory stays bounded: a flood of records is not held to the turn's end."""
    writer = CountingWriter(tmp_path / "c.jsonl")
    recorder = Recorder(writer)
    small = WRITTEN_AT // 2
    recorder.emit([Msg(dir="c2s", ch="stdio", raw=str(n)) for n in range(small)])
    assert writer.batches == []
    recorder.emit([Msg(dir="c2s", ch="stdio", raw=str(n)) for n in range(small, WRITTEN_AT)])
    assert writer.batches == [WRITTEN_AT]
    recorder.emit([Msg(dir="s2c", ch="stdio", raw=str(n)) for n in range(WRITTEN_AT)])
    assert writer.batches == [WRITTEN_AT, WRITTEN_AT]
    await asyncio.sleep(0)
    assert writer.batches == [WRITTEN_AT, WRITTEN_AT]  # nothing left for the turn's end
    writer.close()
    assert len(_raws(tmp_path / "c.jsonl")) == 2 * WRITTEN_AT
