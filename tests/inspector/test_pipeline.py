"""Recording never breaks the relay: a failing writer is reported, not raised."""

from __future__ import annotations

from pathlib import Path

from mcpeek.inspector.capture import CaptureWriter
from mcpeek.inspector.pipeline import Recorder
from mcpeek.inspector.records import Msg


def test_a_failing_writer_is_reported_not_raised(tmp_path: Path) -> None:
    writer = CaptureWriter(tmp_path / "c.jsonl", transport="stdio", target=["s"])
    writer.close()  # any later write fails
    errors: list[BaseException] = []
    recorder = Recorder(writer, on_error=errors.append)
    recorder.emit([Msg(dir="c2s", ch="stdio", raw="{}")])
    assert len(errors) == 1 and "closed" in str(errors[0])
