"""Open a capture file for writing: private, never through a link, one writer at a time.

Captures hold whole conversations (tool arguments, results, sometimes
secrets), so the directories mcpeek creates are 0700 and the files 0600,
whatever the umask (as XDG asks of a state directory). The file is opened
with ``O_NOFOLLOW``: a symbolic link planted at its name is refused, never
followed (following it would truncate the file it points to). A file that
is not a regular file (a FIFO, a device, a directory, a socket) is refused
before it is opened, a file owned by another user is refused, and so is a
file that already holds data unless ``force`` is given (an empty one, such
as ``mktemp`` makes, is taken as it is).

A capture writer given ``force`` does not empty the old file at once: it
writes a new file next to it (:func:`open_beside`) and renames it over the
old one once its run has started, so that a server that fails to start
leaves the old capture as it was. The old file stays locked until then, so
no other writer takes it.

The writer holds an exclusive ``flock`` on the file for its whole life, as
SQLite does: a second writer is refused, ``force`` or not, instead of
interleaving its records with the first one's. The lock is advisory:
readers (``view``, ``show -f``, the live checks) do not take it and keep
reading a file being written.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
import sys
from pathlib import Path

PRIVATE_DIR_MODE = 0o700
PRIVATE_FILE_MODE = 0o600
# Not on every platform (Windows): there, the checks below are all that is done.
O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


class CaptureFileError(Exception):
    """The capture file cannot be written; ``str()`` is the user-facing reason."""


def kind_of(mode: int) -> str | None:
    """What a file that is not a regular file is, in words; None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    return "not a regular file"


def make_private_dirs(directory: Path) -> None:
    """Create ``directory`` and its missing parents, each with mode 0700 (existing
    ones are left as they are)."""
    missing: list[Path] = []
    while not os.path.lexists(directory) and directory != directory.parent:
        missing.append(directory)
        directory = directory.parent
    for path in reversed(missing):
        try:
            os.mkdir(path, PRIVATE_DIR_MODE)
        except FileExistsError:  # made meanwhile by someone else: theirs to keep
            continue
        # The umask can take bits away from 0700 (never add any): set it exactly.
        os.chmod(path, PRIVATE_DIR_MODE)


def open_for_writing(path: Path, *, force: bool = False, empty: bool = True) -> int:
    """A file descriptor on ``path``, empty, mode 0600, locked for this writer alone.

    Raises :class:`CaptureFileError` with the reason when the file is refused,
    ``OSError`` when the system refuses it. With ``force`` and not ``empty``, a
    file that holds data is taken, locked, with its data kept (the caller writes
    beside it, :func:`open_beside`, and replaces it later).
    """
    make_private_dirs(path.parent)
    with contextlib.suppress(FileNotFoundError):  # (a new file)
        _check(path, os.lstat(path))  # before opening: a FIFO's open would block
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC
    try:
        fd = os.open(path, flags, PRIVATE_FILE_MODE)
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # a link appeared since the check
            raise CaptureFileError(f"{path} is a symbolic link; name the file itself") from None
        raise
    try:
        info = os.fstat(fd)
        _check(path, info)  # what was opened may not be what was checked
        _lock(fd, path)  # first: a live capture is refused as such, --force or not
        if info.st_size:
            if not force:
                raise CaptureFileError(
                    f"{path} already exists; add --force to overwrite it, or name another file"
                )
            if empty:
                os.ftruncate(fd, 0)
        if info.st_mode & 0o777 != PRIVATE_FILE_MODE and hasattr(os, "fchmod"):
            os.fchmod(fd, PRIVATE_FILE_MODE)  # an existing file, made with another mode
        if O_NONBLOCK:
            os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_beside(path: Path) -> tuple[int, Path]:
    """A new, empty, private and locked file in ``path``'s directory, named after it
    and hidden (``.NAME.PID.RANDOM.new``): the capture that is to replace ``path``
    (``os.replace``, atomic on one file system). Created with ``O_EXCL``: never a
    file or link that was there."""
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_EXCL | O_NOFOLLOW | O_CLOEXEC
    while True:
        beside = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.new")
        try:
            fd = os.open(beside, flags, PRIVATE_FILE_MODE)
        except FileExistsError:  # (a clash of random names: take another)
            continue
        break
    try:
        if hasattr(os, "fchmod"):
            os.fchmod(fd, PRIVATE_FILE_MODE)  # the umask can take bits away: set it exactly
        _lock(fd, beside)
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(beside)
        raise
    return fd, beside


def write_all(fd: int, data: bytes | memoryview) -> None:
    """Hand all of ``data`` to the kernel (``os.write`` may take less than asked)."""
    written = os.write(fd, data)
    if written == len(data):  # all but always, for a regular file: no view to make
        return
    with memoryview(data) as view:
        while written < len(view):
            written += os.write(fd, view[written:])


def _check(path: Path, info: os.stat_result) -> None:
    kind = kind_of(info.st_mode)
    if kind == "a symbolic link":
        raise CaptureFileError(f"{path} is a symbolic link; name the file itself")
    if kind is not None:
        raise CaptureFileError(f"{path} is {kind}, not a regular file")
    if hasattr(os, "geteuid") and info.st_uid != os.geteuid():
        raise CaptureFileError(f"{path} belongs to another user (uid {info.st_uid})")


def _lock(fd: int, path: Path) -> None:
    if sys.platform == "win32":
        return
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise CaptureFileError(
            f"{path} is being written by another mcpeek; name another file"
        ) from None
    except OSError:  # a file system without locks: write unlocked, as before
        pass


def being_written(path: Path) -> bool:
    """Whether a writer (a proxy, ``serve``, ``replay``) still holds ``path``'s lock.

    Readers take no lock; this only asks for a shared one and lets it go at once,
    which fails while a writer holds its exclusive lock. Where locks are not
    available the answer is ``True``: the caller keeps following, as before.
    """
    if sys.platform == "win32":
        return True
    import fcntl

    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return False  # gone: nobody writes it any more
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return True
    finally:
        os.close(fd)
    return False


class WriterGone:
    """A ``stop`` for following a capture: true once its writer has let go of it.

    It says so only at the second look that finds the file unlocked, so that the
    reader reads once more after the writer's last records reached the file
    (a writer writes everything before it closes, and closing releases the lock).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._unlocked_before = False

    def __call__(self) -> bool:
        if being_written(self.path):
            self._unlocked_before = False
            return False
        seen_twice = self._unlocked_before
        self._unlocked_before = True
        return seen_twice
