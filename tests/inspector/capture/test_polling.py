"""A follower's waits: short while records come, longer and longer once they stop."""

from __future__ import annotations

import threading
from pathlib import Path

from mcpeek.inspector.capture.polling import Polling
from mcpeek.inspector.capture.reader import CaptureReader
from mcpeek.inspector.capture.writer import CaptureWriter
from mcpeek.inspector.records import Msg


def test_waits_double_up_to_the_longest_and_come_back_with_data() -> None:
    waited: list[float] = []
    polling = Polling(0.02, 0.25, waited.append)
    for _ in range(6):
        polling.idle()
    polling.came()
    polling.idle()
    assert waited == [0.02, 0.04, 0.08, 0.16, 0.25, 0.25, 0.02]


def test_a_plain_interval_never_grows() -> None:
    waited: list[float] = []
    polling = Polling(0.05, wait=waited.append)
    for _ in range(3):
        polling.idle()
    assert waited == [0.05, 0.05, 0.05]


def test_a_follower_waits_longer_while_idle_and_short_again_once_records_come(
    tmp_path: Path,
) -> None:
    path = tmp_path / "c.jsonl"
    writer = CaptureWriter(path, transport="stdio", target=["s"])
    waited: list[float] = []

    def wait(seconds: float) -> None:
        waited.append(seconds)
        if len(waited) == 5:  # five empty looks: a record comes
            writer.write(Msg(dir="c2s", ch="stdio", raw="late"))

    reader = CaptureReader(path)
    seen = []
    for record in reader.records(
        follow=True, stop=lambda: len(waited) >= 7, poll_interval=Polling(0.01, 1.0, wait)
    ):
        seen.append(record.raw)
    writer.close()
    assert seen == ["late"]
    assert waited == [0.01, 0.02, 0.04, 0.08, 0.16, 0.01, 0.02]


def test_a_wait_on_an_event_ends_as_soon_as_it_is_set() -> None:
    told = threading.Event()
    polling = Polling(30.0, 60.0, told.wait)
    threading.Timer(0.05, told.set).start()
    polling.idle()  # the suite would hang here for 30 s if the event did not end it
    assert told.is_set()
