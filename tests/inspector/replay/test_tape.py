"""One tape for serve and replay: numbers, stamps, writes and checks a session's records."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcpeek.inspector.analysis import AnalysisListener, Conversation
from mcpeek.inspector.capture import CaptureWriter, read_records
from mcpeek.inspector.records import Header, Msg, Record
from mcpeek.inspector.replay.tape import Tape

PING = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
PONG = b'{"jsonrpc":"2.0","id":1,"result":{}}'


class Seen(AnalysisListener):
    def __init__(self) -> None:
        self.records: list[Record] = []

    def on_record(self, record: Record, conversation: Conversation | None) -> None:
        self.records.append(record)


def test_records_are_numbered_stamped_and_their_side_kept() -> None:
    seen = Seen()
    tape = Tape("http", "http://x/mcp", listeners=[seen])
    tape.http("1", "request", method="POST", path="/mcp")
    tape.msg("c2s", PING, "1")
    tape.http("1", "response", status=200)
    tape.msg("s2c", PONG, "1")
    tape.event("client-eof")
    tape.close()
    assert [tape.direction(n) for n in range(1, 6)] == ["c2s", "c2s", "s2c", "s2c", None]
    numbered = [r for r in seen.records if not isinstance(r, Header)]
    assert sorted(getattr(r, "seq", 0) for r in numbered) == [1, 2, 3, 4, 5]
    assert all(getattr(r, "t", 0) > 0 for r in numbered)
    assert tape.header.transport == "http" and tape.header.target == "http://x/mcp"


def test_the_checks_see_the_header_the_capture_has(tmp_path: Path) -> None:
    seen = Seen()
    writer = CaptureWriter(tmp_path / "c.jsonl", transport="stdio", target=["srv"])
    tape = Tape("stdio", writer=writer, listeners=[seen])
    tape.msg("c2s", PING)
    tape.close()
    header, records, _ = read_records(tmp_path / "c.jsonl")
    assert tape.header is writer.header and header.target == ["srv"]
    assert [type(r) for r in records] == [Msg] and records[0].seq == 1


def test_a_failed_write_ends_the_capture_not_the_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = Seen()
    writer = CaptureWriter(tmp_path / "c.jsonl", transport="stdio", target=["srv"])
    tape = Tape("stdio", writer=writer, listeners=[seen])
    tape.msg("c2s", PING)

    def full(record: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(writer, "write", full)
    tape.msg("s2c", PONG)
    tape.msg("c2s", PING)
    tape.close()
    assert tape.error is not None and "cannot write the capture" in tape.error
    assert "No space left" in tape.error
    checked = [r for r in seen.records if isinstance(r, Msg)]
    assert [r.seq for r in checked] == [1, 2, 3]  # still numbered and checked
    assert tape.direction(3) == "c2s"


def test_nothing_is_taken_once_the_tape_is_closed() -> None:
    seen = Seen()
    tape = Tape(listeners=[seen])
    tape.close()
    tape.msg("c2s", PING)
    tape.close()
    assert not [r for r in seen.records if isinstance(r, Msg)] and tape.direction(1) is None
