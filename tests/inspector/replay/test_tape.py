"""One tape for serve and replay: numbers, stamps, writes and checks a session's records."""

from __future__ import annotations

from collections.abc import Callable
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

    monkeypatch.setattr(writer, "write", raising(OSError(28, "No space left on device")))
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


def old_capture(tmp_path: Path) -> tuple[Path, bytes]:
    path = tmp_path / "old.jsonl"
    writer = CaptureWriter(path, transport="stdio", target=["old"])
    writer.close()
    return path, path.read_bytes()


def raising(error: OSError) -> Callable[..., None]:
    """A stand-in for a call that fails with ``error`` (a full disk, a refusal)."""

    def failing(*args: object) -> None:
        raise error

    return failing


def replay_tape(path: Path, *, force: bool) -> Tape:
    writer = CaptureWriter(path, transport="stdio", target=["new"], force=force)
    return Tape(writer=writer, started_by="s2c", replace_at_start=False)


def test_a_replay_tape_replaces_the_old_capture_only_when_it_closes(tmp_path: Path) -> None:
    path, old = old_capture(tmp_path)
    tape = replay_tape(path, force=True)
    tape.msg("c2s", PING)
    tape.msg("s2c", PONG)  # the session has started: a proxy's capture would replace now
    assert path.read_bytes() == old
    tape.close()
    header, records, _ = read_records(path)
    assert header.target == ["new"] and len(records) == 2


def test_an_abandoned_replay_keeps_the_old_capture_and_leaves_nothing_beside(
    tmp_path: Path,
) -> None:
    path, old = old_capture(tmp_path)
    tape = replay_tape(path, force=True)
    tape.msg("c2s", PING)
    tape.msg("s2c", PONG)
    said = tape.abandon()
    assert said == f"{path} kept as it was (the unfinished replay is not saved)"
    assert path.read_bytes() == old
    assert [p.name for p in tmp_path.iterdir()] == ["old.jsonl"]


@pytest.mark.parametrize("answered", [False, True])
def test_an_abandoned_replay_into_a_new_file_keeps_it_once_the_server_answered(
    tmp_path: Path, answered: bool
) -> None:
    path = tmp_path / "new.jsonl"
    tape = replay_tape(path, force=False)
    tape.msg("c2s", PING)
    if answered:
        tape.msg("s2c", PONG)
    said = tape.abandon()
    if answered:
        assert said == f"the capture {path} holds the replay up to the interruption"
        assert len(read_records(path)[1]) == 2
    else:
        assert said == "no capture written (the server had not answered)"
        assert not path.exists()


def test_a_capture_cut_short_never_replaces_the_old_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write failed (a full disk) before the replay's capture took the old one's name:
    at the end the old capture stays, and the error says so."""
    path, old = old_capture(tmp_path)
    tape = replay_tape(path, force=True)
    tape.msg("c2s", PING)
    writer = tape.writer
    assert writer is not None

    monkeypatch.setattr(writer, "write", raising(OSError(28, "No space left on device")))
    tape.msg("s2c", PONG)
    tape.close()
    assert tape.error == (
        f"cannot write the capture {path}: No space left on device; "
        f"{path} kept as it was (this session's capture is not saved)"
    )
    assert path.read_bytes() == old
    assert [p.name for p in tmp_path.iterdir()] == ["old.jsonl"]


def test_a_session_stopped_before_it_started_never_replaces_the_old_capture(
    tmp_path: Path,
) -> None:
    """``serve --force -w old.jsonl`` stopped (Ctrl-C, SIGTERM: a normal end) before
    any client said a word: the old capture stays."""
    path, old = old_capture(tmp_path)
    writer = CaptureWriter(path, transport="http", target="mock", force=True)
    tape = Tape("http", writer=writer, started_by="c2s")
    tape.event("listen", addr="127.0.0.1:1")
    tape.close()
    assert tape.error is None
    assert path.read_bytes() == old
    assert [p.name for p in tmp_path.iterdir()] == ["old.jsonl"]


def test_a_replay_whose_capture_cannot_replace_the_old_one_says_where_it_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rename at the end refused: nothing is lost, and the user is told where
    the session's capture is (under the hidden name it was written to)."""
    path, old = old_capture(tmp_path)
    tape = replay_tape(path, force=True)
    tape.msg("c2s", PING)
    tape.msg("s2c", PONG)
    beside = tape.writer.writing_path if tape.writer is not None else path

    monkeypatch.setattr("os.replace", raising(PermissionError(13, "Permission denied")))
    tape.close()
    assert tape.error == (
        f"cannot replace {path}: Permission denied; this session's capture is {beside}, "
        f"{path} kept as it was"
    )
    assert path.read_bytes() == old
    assert read_records(beside)[0].target == ["new"] and len(read_records(beside)[1]) == 2
