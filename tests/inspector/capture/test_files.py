"""How capture files are opened for writing: modes, links, owners, existing data, one writer."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from mcpeek.inspector.capture import CaptureReader, CaptureWriter, read_records
from mcpeek.inspector.capture.files import CaptureFileError
from mcpeek.inspector.records import Msg

OTHER_UID = 65534  # nobody


@pytest.fixture
def open_umask() -> Iterator[None]:
    """``umask 000``: what mcpeek creates must be private anyway."""
    old = os.umask(0)
    try:
        yield
    finally:
        os.umask(old)


def writer(path: Path, *, force: bool = False) -> CaptureWriter:
    return CaptureWriter(path, transport="stdio", target=["s"], force=force)


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def test_new_directories_are_0700_and_files_0600_whatever_the_umask(
    tmp_path: Path, open_umask: None
) -> None:
    state = tmp_path / "state"
    state.mkdir(mode=0o755)
    path = state / "mcpeek" / "captures" / "c.jsonl"
    writer(path).close()
    assert mode(path) == 0o600
    assert mode(path.parent) == mode(path.parent.parent) == 0o700
    assert mode(state) == 0o755  # an existing directory is the user's business


def test_an_overwritten_file_becomes_0600(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    path.write_text("old\n")
    path.chmod(0o644)
    writer(path, force=True).close()
    assert mode(path) == 0o600
    assert read_records(path)[0].format == "mcpeek-capture"  # and "old" is gone


@pytest.mark.parametrize("target_exists", [True, False])
def test_a_symlink_at_the_path_is_refused_not_followed(tmp_path: Path, target_exists: bool) -> None:
    victim = tmp_path / "victim.txt"
    if target_exists:
        victim.write_text("precious\n")
    link = tmp_path / "c.jsonl"
    link.symlink_to(victim)
    with pytest.raises(CaptureFileError, match="symbolic link"):
        writer(link, force=True)
    if target_exists:
        assert victim.read_text() == "precious\n"  # not truncated
    else:
        assert not victim.exists()  # not created through the link
    assert link.is_symlink()


def test_a_file_of_another_user_is_refused(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        path = tmp_path / "theirs.jsonl"
        path.write_text("")
        os.chown(path, OTHER_UID, OTHER_UID)
    else:  # a file root owns, that no test can chown
        path = Path("/etc/hostname") if Path("/etc/hostname").is_file() else Path("/etc/passwd")
    before = path.read_bytes()
    with pytest.raises(CaptureFileError, match="belongs to another user"):
        writer(path, force=True)
    assert path.read_bytes() == before


def test_a_file_that_holds_data_needs_force(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    with writer(path) as first:
        first.write(Msg(dir="c2s", ch="stdio", raw="kept"))
    with pytest.raises(CaptureFileError, match="already exists; add --force"):
        writer(path)
    assert [r.raw for r in read_records(path)[1]] == ["kept"]
    writer(path, force=True).close()
    assert read_records(path)[1] == []


def test_an_empty_file_is_taken_as_it_is(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    path.touch()  # as mktemp leaves it
    writer(path).close()
    assert read_records(path)[0].transport == "stdio"


@pytest.mark.parametrize("force", [False, True])
def test_a_second_writer_is_refused_while_the_first_writes(tmp_path: Path, force: bool) -> None:
    path = tmp_path / "c.jsonl"
    first = writer(path)
    first.write(Msg(dir="c2s", ch="stdio", raw="1"))
    with pytest.raises(CaptureFileError, match="being written by another mcpeek"):
        writer(path, force=force)
    first.write(Msg(dir="c2s", ch="stdio", raw="2"))
    first.close()
    records = read_records(path)[1]
    assert [(r.seq, r.raw) for r in records] == [(1, "1"), (2, "2")]
    writer(path, force=True).close()  # the lock went with the first writer


def test_readers_read_a_file_a_writer_holds_locked(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    with writer(path) as live:
        live.write(Msg(dir="c2s", ch="stdio", raw="x"))
        reader = CaptureReader(path)
        assert [r.raw for r in reader.records()] == ["x"]


@pytest.mark.parametrize("kind", ["fifo", "directory", "device", "socket"])
def test_a_file_that_is_not_regular_is_refused(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "c.jsonl"
    if kind == "fifo":
        os.mkfifo(path)  # opening it for writing would block until a reader came
    elif kind == "directory":
        path.mkdir()
    elif kind == "device":
        path = Path(os.devnull)
    else:
        import socket

        server = socket.socket(socket.AF_UNIX)
        server.bind(str(path))
    with pytest.raises(CaptureFileError, match="not a regular file"):
        writer(path, force=True)


def test_discard_removes_the_file_it_made(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    started = writer(path)
    started.discard()
    assert not path.exists()
    assert started.closed


def test_discard_leaves_a_file_that_took_the_name_since(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    started = writer(path)
    path.unlink()
    path.write_text("someone else's\n")
    started.discard()
    assert path.read_text() == "someone else's\n"


def test_force_writes_beside_the_old_capture_until_the_run_starts(tmp_path: Path) -> None:
    path = tmp_path / "cap.jsonl"
    path.write_bytes(b"old capture\n")
    first = writer(path, force=True)
    beside = first.writing_path
    assert beside != path and beside.parent == tmp_path and beside.name.startswith(".cap.jsonl.")
    assert path.read_bytes() == b"old capture\n"  # not emptied at once
    assert stat.S_IMODE(beside.stat().st_mode) == 0o600
    with pytest.raises(CaptureFileError, match="being written by another mcpeek"):
        writer(path, force=True)  # the old file stays locked meanwhile
    first.commit()
    assert first.writing_path == path and not beside.exists()
    assert path.read_bytes().startswith(b'{"k":"header"')
    first.close()


def test_a_run_that_never_started_leaves_the_old_capture(tmp_path: Path) -> None:
    path = tmp_path / "cap.jsonl"
    path.write_bytes(b"old capture\n")
    writer(path, force=True).discard()
    assert path.read_bytes() == b"old capture\n"
    assert [p.name for p in tmp_path.iterdir()] == ["cap.jsonl"]
    writer(path, force=True).close()  # and the lock went with it


def test_a_capture_that_cannot_take_its_name_can_still_be_discarded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A failed rename leaves both files as they were: discard() then removes the new
    one, and the old capture stays (its lock released)."""
    path = tmp_path / "cap.jsonl"
    path.write_bytes(b"old capture\n")
    started = writer(path, force=True)

    def refused(src: object, dst: object) -> None:
        raise PermissionError(13, "Permission denied", str(src), None, str(dst))

    with monkeypatch.context() as patched:
        patched.setattr(os, "replace", refused)
        with pytest.raises(PermissionError):
            started.commit()
    assert started.writing_path != path and started.writing_path.exists()
    started.discard()
    assert path.read_bytes() == b"old capture\n"
    assert [p.name for p in tmp_path.iterdir()] == ["cap.jsonl"]
    writer(path, force=True).close()  # and the lock went with it
