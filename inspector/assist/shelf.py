"""Which captures the MCP server answers about, and what a ``capture`` argument names.

The shelf is the capture directory (the one ``mcpeek view`` opens without
files) plus every ``--capture FILE`` the user gave. A client names a capture
as ``list_captures`` shows it (its file name), or by a path.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

SUFFIXES = (".jsonl", ".jsonl.gz")


class UnknownCapture(LookupError):
    """A ``capture`` argument that names no capture file."""


class Shelf:
    def __init__(self, directory: Path | None, files: list[Path]) -> None:
        self.directory = directory
        self.files = [f.expanduser() for f in files]

    def paths(self) -> list[Path]:
        """Every capture, newest first (by time of last change), each once."""
        found: dict[Path, float] = {}
        candidates = list(self.files)
        if self.directory is not None:
            with contextlib.suppress(OSError):  # no directory yet: no recording made
                candidates += [
                    entry
                    for entry in self.directory.iterdir()
                    if entry.name.endswith(SUFFIXES) and not entry.name.startswith(".")
                ]
        for path in candidates:
            try:
                info = os.stat(path)
            except OSError:
                continue
            found.setdefault(path.resolve(), info.st_mtime)
        return sorted(found, key=lambda p: (-found[p], p.name))

    def resolve(self, capture: str) -> Path:
        """The file ``capture`` names: a name ``list_captures`` gave, else a path."""
        if not capture.strip():
            raise UnknownCapture("capture: give a name from list_captures, or a path")
        for path in self.paths():
            if capture in (path.name, str(path)):
                return path
        given = Path(capture).expanduser()
        if given.is_file():
            return given.resolve()
        raise UnknownCapture(f"no capture {capture!r}: list_captures names them, or give a path")
