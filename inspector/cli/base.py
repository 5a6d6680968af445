"""Subcommands register themselves by subclassing :class:`Command`.

Each subclass names itself (``name``), describes itself (``help``), adds its
arguments, and runs. The registry is filled by ``__init_subclass__``, so the
parser, ``--help`` and the docs are built from one place.
"""

from __future__ import annotations

import argparse
import errno
import math
import os
import re
from pathlib import Path
from typing import ClassVar

from mcpeek.inspector.views.in_flight import DEFAULT_SLOW

# In a repr: an escaped backslash, or a byte that was not UTF-8 (U+DC80-U+DCFF).
REPR_ESCAPE = re.compile(r"\\\\|\\udc([89a-f][0-9a-f])")


class UsageError(Exception):
    """Bad command-line input: printed as ``mcpeek: …`` with exit code 2."""


def shown_argument(text: str) -> str:
    """A command-line argument as a message shows it: its repr, with each byte that is
    not UTF-8 as ``\\xff``, as bytes show it. Such bytes come in argv as lone
    surrogates (``surrogateescape``), which repr writes ``\\udcff``: a character the
    user never typed."""
    # (escaped backslashes are taken first, so a typed "\\udcff" stays as it is)
    return REPR_ESCAPE.sub(lambda m: f"\\x{m[1]}" if m[1] else m[0], repr(text))


def refuse_overwriting(output: Path | None, source: Path, flag: str = "-w") -> None:
    """A UsageError when ``output`` (given with ``flag``) names the capture ``source``
    being read: writing would truncate the recording it plays from."""
    if output is None:
        return
    try:
        same = os.path.samefile(output, source)
    except OSError:  # one of them is not there (yet): not the same file
        return
    if same:
        raise UsageError(
            f"{flag} {output} is the capture being read ({source}); writing would erase it: "
            "name another file"
        )


def on_a_terminal() -> bool:
    """Whether standard input and output are both a terminal (the viewer's place); by
    their descriptors, so that a closed one (``<&-``: ``sys.stdin`` is None) is not."""
    return os.isatty(0) and os.isatty(1)


class TypedFloat(float):
    """A float given on the command line that remembers how it was typed (``1e400`` is
    ``inf`` as a float: a refusal echoes what the user wrote)."""

    typed: str

    def __new__(cls, text: str) -> TypedFloat:
        value = super().__new__(cls, text)
        value.typed = text
        return value


def _seconds(text: str) -> TypedFloat:
    try:
        return TypedFloat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None


def directory(text: str) -> Path:
    """A ``--home DIR`` as typed: an empty one (``--home "$DIR"`` with DIR unset) is
    refused, where ``Path("")`` would have been the working directory."""
    if not text:
        raise argparse.ArgumentTypeError("an empty name is no directory")
    return Path(text)


def add_slow_option(parser: argparse.ArgumentParser, what: str) -> None:
    """``--slow SECONDS``, the same on every command that shows requests in flight."""
    parser.add_argument(
        "--slow",
        type=_seconds,
        default=DEFAULT_SLOW,
        metavar="SECONDS",
        help=f"{what} a request still unanswered after this long (default: {DEFAULT_SLOW:g})",
    )


def slow_seconds(args: argparse.Namespace) -> float:
    """The ``--slow`` of ``args``, refused (exit 2) unless a finite number above 0."""
    slow: float = args.slow
    if not math.isfinite(slow) or slow <= 0:
        typed = slow.typed if isinstance(slow, TypedFloat) else f"{slow:g}"
        raise UsageError(f"--slow {typed}: must be a finite number of seconds above 0")
    return slow


class Command:
    registry: ClassVar[dict[str, type[Command]]] = {}
    name: ClassVar[str] = ""
    help: ClassVar[str] = ""
    description: ClassVar[str] = ""
    #: Place in ``mcpeek --help``: the proxies first, then what reads captures.
    order: ClassVar[int] = 50

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        if cls.name:
            Command.registry[cls.name] = cls

    def configure(self, parser: argparse.ArgumentParser) -> None:
        """Add this command's arguments."""

    def run(self, args: argparse.Namespace) -> int:
        raise NotImplementedError


class ClosedOutput:
    """Standard output when it was closed (``mcpeek lint cap.jsonl >&-``): Python leaves
    ``sys.stdout`` None, and the first print was an AttributeError's traceback. Writing
    here fails as a write to a closed file does (EBADF), which :func:`main` reports."""

    def write(self, text: str) -> int:
        raise OSError(errno.EBADF, os.strerror(errno.EBADF))

    def flush(self) -> None:
        pass  # nothing was written: nothing to lose

    @property
    def buffer(self) -> ClosedOutput:  # (the bytes under it: as closed)
        return self

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        return 1  # the descriptor it stands for (/dev/null now: see standard_streams)
