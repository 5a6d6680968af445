"""``mcpeek``: parse the command line and dispatch to a registered subcommand.

Exit codes (docs/architecture.md): 0 ok, 1 findings or the wrapped server's own failure,
2 usage error or unreadable input. Bad input never ends in a traceback.
"""

from __future__ import annotations

import argparse
import errno
import os
import re
import sys
from collections.abc import Sequence

from mcpeek.inspector import __version__, gctune, memtune
from mcpeek.inspector.cli import commands
from mcpeek.inspector.cli.base import ClosedOutput, Command, UsageError

USAGE_ERROR = 2
#: What a write to a full disk, a broken device or a closed output raises (no file
#: name: the output).
OUTPUT_ERRORS = frozenset({errno.ENOSPC, errno.EIO, errno.EFBIG, errno.EDQUOT, errno.EBADF})


class SubcommandParser(argparse.ArgumentParser):
    """A subcommand's parser that reports a word it does not know itself.

    argparse hands a subparser's unknown arguments back to the top-level
    parser, whose error shows ``usage: mcpeek [-h] [--version] COMMAND``: no
    help for someone who mistyped an option of ``mcpeek show``.
    """

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        parsed, extra = super().parse_known_args(args, namespace)
        if extra:
            self.error(f"unrecognized arguments: {' '.join(extra)}")
        return parsed, extra


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mcpeek",
        description="A man-in-the-middle inspector for the Model Context Protocol.",
    )
    parser.add_argument("--version", action="version", version=f"mcpeek {__version__}")
    sub = parser.add_subparsers(dest="subcommand", metavar="COMMAND", parser_class=SubcommandParser)
    listed = sorted(Command.registry.items(), key=lambda kv: (kv[1].order, kv[0]))
    for name, cls in listed:
        command = cls()
        sub_parser = sub.add_parser(
            name,
            help=cls.help,
            description=plain(cls.description or cls.help),
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        command.configure(sub_parser)
        sub_parser.set_defaults(handler=command)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command ``argv`` names; its exit status. Ctrl-C at any point, from
    the loading of the command on, ends it with 130 and no traceback."""
    try:
        return _run(argv)
    except KeyboardInterrupt:
        return 130


def _run(argv: Sequence[str] | None) -> int:
    gctune.for_this_process()
    standard_streams()
    memtune.return_big_blocks()
    words = list(sys.argv[1:] if argv is None else argv)
    # Only the command being run is imported (start-up time is part of every
    # proxied session); an option first, or an unknown word, loads them all.
    commands.load(words[0] if words and not words[0].startswith("-") else None)
    parser = build_parser()
    args = parser.parse_args(argv)
    command: Command | None = getattr(args, "handler", None)
    if command is None:
        parser.print_help(sys.stderr)
        return USAGE_ERROR
    try:
        code = command.run(args)
        sys.stdout.flush()  # a write error of the last buffered output surfaces here
        return code
    except UsageError as exc:
        print(f"mcpeek: {exc}", file=sys.stderr)
        return USAGE_ERROR
    except BrokenPipeError:  # `mcpeek rules | head`: the reader has seen enough
        _stdout_to_devnull()
        return 0
    except OSError as exc:
        if exc.filename is not None or exc.errno not in OUTPUT_ERRORS:
            raise  # (a command reports its own files' errors: this is not one of those)
        # `mcpeek lint … > /dev/full`: the output is lost, which must not look like
        # success nor like findings (1).
        _stdout_to_devnull()
        print(f"mcpeek: cannot write the output: {exc.strerror or exc}", file=sys.stderr)
        return USAGE_ERROR


def standard_streams() -> None:
    """Stand in for a closed standard input, output or error, which Python leaves None
    (every print was a traceback). Each closed descriptor gets /dev/null first, so
    that no file mcpeek opens (a capture) can take fd 0, 1 or 2 and receive protocol
    bytes, output or log lines. Output closed: writing to it fails
    (:class:`ClosedOutput`), as the user should hear. Error closed (``2>&-``):
    mcpeek's messages go nowhere, as asked, and never to standard output, where
    ``print(file=None)`` would put them (for ``stdio``, the protocol pipe)."""
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            null = os.open(os.devnull, os.O_RDWR)
            if null != fd:
                os.dup2(null, fd)
                os.close(null)
    if sys.stderr is None:
        sys.stderr = open(2, "w", buffering=1, closefd=False)  # noqa: SIM115 (for the run)
    if sys.stdout is None:
        sys.stdout = ClosedOutput()


def _stdout_to_devnull() -> None:
    """Point standard output at /dev/null, so that the flush at exit stays quiet."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def plain(docstring: str) -> str:
    """A module docstring as --help text: reST markup (``x``, :class:`y`) as plain words."""
    text = re.sub(r":[a-z]+:`~?([^`]+)`", r"\1", docstring)
    return text.replace("``", "")


if __name__ == "__main__":
    raise SystemExit(main())
