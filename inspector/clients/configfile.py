"""Reading a client's config, keeping a backup, and replacing it in one step.

The new text is written to a temporary file beside the config, given the
config's own mode, flushed, then renamed over it: a client (or a crash)
sees the old file or the new one, never half of one. A config reached
through a symbolic link (dotfiles often are) is replaced at its target, so
the link stays a link. The backup holds the bytes as they were before the
change, mode 0600 (a config can hold API keys), and never replaces an older
backup: the next free name ``FILE.mcpeek-backup``, ``FILE.mcpeek-backup.1``, ...

``FILE.mcpeek-wrap.json`` (0600) keeps what wrap did that the config cannot
tell, for ``unwrap`` (``state.WrapState``).
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import stat
import tempfile
from pathlib import Path

from mcpeek.inspector.capture.files import O_CLOEXEC, O_NOFOLLOW, PRIVATE_FILE_MODE, write_all
from mcpeek.inspector.clients.plan import ConfigError
from mcpeek.inspector.clients.state import WrapState

BACKUP_SUFFIX = ".mcpeek-backup"
STATE_SUFFIX = ".mcpeek-wrap.json"


def read_config(path: Path) -> str:
    """The config's text; ConfigError when it is missing, unreadable or not UTF-8."""
    try:
        # Non-blocking: opening a FIFO waits for a writer otherwise (and reading a
        # device never ends); only a regular file is read.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | O_CLOEXEC)
    except FileNotFoundError:
        raise ConfigError("no such file") from None
    except OSError as exc:
        raise ConfigError(exc.strerror or str(exc)) from None
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise ConfigError("is a directory, not a config file")
        if not stat.S_ISREG(mode):
            raise ConfigError("is not a regular file (a FIFO or a device?), not a config file")
        with open(fd, "rb", closefd=False) as file:
            data = file.read()
    except OSError as exc:
        raise ConfigError(exc.strerror or str(exc)) from None
    finally:
        os.close(fd)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"not UTF-8 text (byte {exc.start})") from None


def create_config(path: Path, data: bytes) -> None:
    """Write a config that is not there yet (mode 0600: configs come to hold API
    keys); its directory must exist (it tells that the client is installed)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | O_NOFOLLOW | O_CLOEXEC
    try:
        fd = os.open(path, flags, PRIVATE_FILE_MODE)
    except FileExistsError:
        raise ConfigError("appeared while mcpeek was writing it; run again") from None
    except FileNotFoundError:
        raise ConfigError(f"no such directory: {path.parent}") from None
    try:
        write_all(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)


def keep_backup(path: Path, original: bytes) -> Path:
    """Write ``original`` to the first free backup name beside ``path``; its name."""
    for number in range(1000):
        backup = path.with_name(path.name + BACKUP_SUFFIX + (f".{number}" if number else ""))
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | O_NOFOLLOW | O_CLOEXEC
        try:
            fd = os.open(backup, flags, PRIVATE_FILE_MODE)
        except FileExistsError:
            continue
        try:
            write_all(fd, original)
            os.fsync(fd)
        except BaseException:
            os.close(fd)
            os.unlink(backup)  # a backup cut short (a full disk) would restore half a config
            raise
        os.close(fd)
        return backup
    raise ConfigError("1000 backups already beside it; remove old ones")


def replace_atomically(path: Path, data: bytes, *, expected: bytes | None = None) -> None:
    """Make ``path`` (its target, for a link) hold ``data``, all at once, mode kept.

    With ``expected``, a file that no longer holds those bytes is left alone
    (ConfigError): a client that rewrites its config itself (Claude Code and
    ``~/.claude.json``) may have saved it since it was read, and replacing it
    would drop that change.
    """
    target = Path(os.path.realpath(path))
    mode = os.stat(target).st_mode & 0o7777
    fd, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        try:
            write_all(fd, data)
            if hasattr(os, "fchmod"):
                os.fchmod(fd, mode)
            os.fsync(fd)
        finally:
            os.close(fd)
        if expected is not None and target.read_bytes() != expected:
            raise ConfigError("changed while mcpeek was editing it (by its client?); run again")
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise
    _sync_directory(target.parent)


def state_path(path: Path) -> Path:
    """The state file of a config (beside its target, when it is a link)."""
    target = Path(os.path.realpath(path))
    return target.with_name(target.name + STATE_SUFFIX)


def read_state(path: Path) -> WrapState:
    """What wrap did to the config at ``path`` that the config cannot tell (nothing
    when there is no state file); ConfigError when the state file is unreadable."""
    state = state_path(path)
    try:
        return WrapState.from_json(json.loads(state.read_bytes()))
    except FileNotFoundError:
        return WrapState()
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{state}: {getattr(exc, 'strerror', None) or exc}") from None


def write_state(path: Path, wrap_state: WrapState) -> None:
    """Keep ``wrap_state`` for the config at ``path`` (0600, in one step); an empty
    state, no state file."""
    state = state_path(path)
    if not wrap_state:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(state)
        return
    data = (json.dumps(wrap_state.to_json(), indent=2) + "\n").encode("utf-8")
    fd, temporary = tempfile.mkstemp(dir=state.parent, prefix=f".{state.name}.", suffix=".tmp")
    try:
        try:
            write_all(fd, data)  # mkstemp made it 0600
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temporary, state)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise


def _sync_directory(directory: Path) -> None:
    """Make the rename durable (POSIX); a platform that cannot open a directory skips it."""
    try:
        fd = os.open(directory, os.O_RDONLY | O_CLOEXEC)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError as exc:
        if exc.errno not in (errno.EINVAL, errno.EBADF):
            raise
    finally:
        os.close(fd)
