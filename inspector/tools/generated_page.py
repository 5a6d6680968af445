"""Write a generated documentation page, or check that the committed one is current.

The pages under ``docs/`` that are made from the code (the rule catalog from the
registry, the module map from the docstrings) share one command line:
``--out FILE`` (default: the clone's ``docs/`` page) and ``--check``, which
writes nothing and exits 1 with a one-line message when the page is stale.
Exit 2 for a file that cannot be written or read, or for no ``docs/`` folder
beside the package (installed from a wheel) and no ``--out``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path


def main(
    argv: Sequence[str] | None,
    *,
    prog: str,
    description: str,
    default_out: Path,
    render: Callable[[], str],
) -> int:
    """Run one page's command line: ``prog`` is how to regenerate it (named in the
    stale message) and its tag in every message."""
    name = prog.rsplit(".", 1)[-1]
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("--out", type=Path, help=f"default: docs/{default_out.name} of this clone")
    parser.add_argument(
        "--check", action="store_true", help="write nothing; exit 1 if the page is stale"
    )
    args = parser.parse_args(argv)
    if args.out is None:
        if not default_out.parent.is_dir():  # installed from a wheel: no docs/ beside it
            print(
                f"{name}: error: {default_out.parent} is not a clone's docs/ folder; "
                "give --out FILE",
                file=sys.stderr,
            )
            return 2
        args.out = default_out
    page = render()
    try:
        if args.check:
            current = args.out.read_text(encoding="utf-8") if args.out.exists() else ""
            if current != page:
                print(f"{name}: {args.out} is stale: run {prog}", file=sys.stderr)
                return 1
            return 0
        args.out.write_text(page, encoding="utf-8")
    except OSError as exc:
        print(f"{name}: error: {exc}", file=sys.stderr)
        return 2
    return 0
