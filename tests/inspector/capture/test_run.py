"""run_capture: the one loop that feeds a capture to the analysis (header first, follow, finish)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from mcpeek.inspector.capture import CaptureReader, CaptureWriter
from mcpeek.inspector.capture.run import run_capture
from mcpeek.inspector.records import Event, Header, Msg, Record

PING = '{"jsonrpc":"2.0","id":1,"method":"ping"}'


class Recording:
    """An analysis that notes what it was given, in order."""

    def __init__(self, interrupt_at: int | None = None) -> None:
        self.fed: list[str] = []
        self.finished = 0
        self.ticks = 0
        self._interrupt_at = interrupt_at

    def feed(self, record: Record) -> None:
        self.fed.append(type(record).__name__)
        if len(self.fed) == self._interrupt_at:
            raise KeyboardInterrupt

    def finish(self) -> None:
        self.finished += 1

    def tick(self, now: float) -> None:
        self.ticks += 1


def test_the_header_comes_first_then_every_record_then_finish(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    with CaptureWriter(path, transport="stdio", target=["srv"]) as writer:
        writer.write(Msg(dir="c2s", ch="stdio", raw=PING))
        writer.write(Event(event="exit", code=0))
    analysis = Recording()
    seen: list[str] = []
    run_capture(CaptureReader(path), analysis, each=lambda r: seen.append(type(r).__name__))
    assert analysis.fed == ["Header", "Msg", "Event"]
    assert seen == ["Msg", "Event"]  # ``each`` sees records, not the header
    assert analysis.finished == 1


def test_a_capture_with_only_its_header_still_gives_the_header(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    CaptureWriter(path, transport="http", target=["u"]).close()
    reader = CaptureReader(path)
    streamed = list(reader.stream())
    assert len(streamed) == 1 and isinstance(streamed[0], Header)
    assert streamed[0].transport == "http"


def test_ctrl_c_still_finishes_what_was_read(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    with CaptureWriter(path, transport="stdio", target=["srv"]) as writer:
        for _ in range(3):
            writer.write(Msg(dir="c2s", ch="stdio", raw=PING))
    analysis = Recording(interrupt_at=2)
    with pytest.raises(KeyboardInterrupt):
        run_capture(CaptureReader(path), analysis)
    assert analysis.fed == ["Header", "Msg"] and analysis.finished == 1


def test_following_stops_at_the_exit_event_and_ticks_while_waiting(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    writer = CaptureWriter(path, transport="stdio", target=["srv"])
    writer.write(Msg(dir="c2s", ch="stdio", raw=PING))

    def later() -> None:
        time.sleep(0.3)
        writer.write(Event(event="exit", code=0))
        writer.write(Msg(dir="c2s", ch="stdio", raw=PING))  # after exit: not waited for
        writer.close()

    thread = threading.Thread(target=later)
    thread.start()
    analysis = Recording()
    run_capture(CaptureReader(path), analysis, follow=True, poll_interval=0.01)
    thread.join()
    assert analysis.fed[:3] == ["Header", "Msg", "Event"]
    assert analysis.ticks > 0 and analysis.finished == 1


def test_following_also_stops_when_told(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    with CaptureWriter(path, transport="stdio", target=["srv"]) as writer:
        writer.write(Msg(dir="c2s", ch="stdio", raw=PING))
    polls = [0]

    def stop() -> bool:
        polls[0] += 1
        return polls[0] >= 3

    analysis = Recording()
    run_capture(CaptureReader(path), analysis, follow=True, stop=stop, poll_interval=0.01)
    assert analysis.fed == ["Header", "Msg"] and polls[0] == 3 and analysis.finished == 1


def test_a_cancelled_run_stops_before_the_next_record_and_is_not_finished(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    with CaptureWriter(path, transport="stdio", target=["srv"]) as writer:
        for _ in range(5):
            writer.write(Msg(dir="c2s", ch="stdio", raw=PING))
    analysis = Recording()
    done = run_capture(CaptureReader(path), analysis, cancelled=lambda: len(analysis.fed) >= 3)
    assert done is False
    assert analysis.fed == ["Header", "Msg", "Msg"] and analysis.finished == 0


def test_a_cancelled_follow_stops_waiting_unfinished(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    writer = CaptureWriter(path, transport="stdio", target=["srv"])
    writer.write(Msg(dir="c2s", ch="stdio", raw=PING))  # and no exit: it would wait for ever
    quit_ = threading.Event()
    threading.Timer(0.2, quit_.set).start()
    analysis = Recording()
    done = run_capture(
        CaptureReader(path), analysis, follow=True, cancelled=quit_.is_set, poll_interval=0.01
    )
    writer.close()
    assert done is False and analysis.fed == ["Header", "Msg"] and analysis.finished == 0


def test_a_complete_run_says_so(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    CaptureWriter(path, transport="stdio", target=["srv"]).close()
    assert run_capture(CaptureReader(path), Recording(), cancelled=lambda: False) is True
