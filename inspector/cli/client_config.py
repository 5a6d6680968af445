"""What ``mcpeek wrap`` and ``mcpeek unwrap`` share: finding the config, writing the plan.

A plan (``inspector.clients.plan``) is shown as a unified diff with
``--dry-run``, else written: backup first, then the config replaced in one
step. Reports go to stderr as ``mcpeek: ...`` lines; stdout carries only the
diff, so ``--dry-run > change.patch`` holds a patch, applied with ``patch FILE <
change.patch`` (its header names the config's absolute path, which ``patch -p0``
refuses: naming the file is the way that always works).
"""

from __future__ import annotations

import argparse
import difflib
import os
import sys
from pathlib import Path

from mcpeek.inspector.cli.base import UsageError
from mcpeek.inspector.clients.configfile import (
    create_config,
    keep_backup,
    read_config,
    read_state,
    replace_atomically,
    write_state,
)
from mcpeek.inspector.clients.known import CLIENT_NAMES, Client, Places, client_named
from mcpeek.inspector.clients.plan import ConfigError, Plan
from mcpeek.inspector.clients.state import WrapState


def add_common_arguments(parser: argparse.ArgumentParser, verb: str) -> None:
    parser.add_argument(
        "client",
        nargs="?",
        choices=CLIENT_NAMES,
        metavar="CLIENT",
        help=f"whose config to {verb}: {', '.join(CLIENT_NAMES)}",
    )
    parser.add_argument(
        "--server",
        action="append",
        metavar="NAME",
        help=f"{verb} only this server (repeat for more; default: all)",
    )
    parser.add_argument(
        "--config",
        type=Path,
        metavar="PATH",
        help="the config file to edit (default: the client's own, see wrap --list)",
    )
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help=(
            "print the change as a unified diff and write nothing "
            "(apply it with: patch CONFIG < DIFF)"
        ),
    )


def config_of(args: argparse.Namespace, verb: str) -> tuple[Client, Path]:
    if args.client is None:
        raise UsageError(f"{verb} needs a CLIENT: one of {', '.join(CLIENT_NAMES)}")
    client = client_named(args.client)
    assert client is not None  # argparse checked the choice
    path = args.config if args.config is not None else client.locate(Places.here())
    return client, path


def load(path: Path, *, missing_ok: bool = False) -> tuple[str | None, WrapState]:
    """The config's text (None for a file not there, when ``missing_ok``) and what the
    state file says wrap did to it."""
    try:
        text = read_config(path)
    except ConfigError as exc:
        if missing_ok and not os.path.lexists(path):
            return None, WrapState()
        raise UsageError(f"{path}: {exc}") from None
    try:
        return text, read_state(path)
    except ConfigError as exc:
        raise UsageError(str(exc)) from None


def carry_out(path: Path, before: str | None, plan: Plan, *, dry_run: bool, verb: str) -> int:
    """Show or write ``plan`` (``before`` None: a new file); report what changed; 0
    (nothing here is a failure)."""
    for note in plan.notes:
        print(f"mcpeek: {note}", file=sys.stderr)
    if before is None:
        return _create(path, plan, dry_run=dry_run)
    if plan.text == before:
        print(f"mcpeek: {path}: nothing to {verb}; the file is unchanged", file=sys.stderr)
        return 0
    if dry_run:
        sys.stdout.writelines(
            difflib.unified_diff(
                before.splitlines(keepends=True),
                plan.text.splitlines(keepends=True),
                fromfile=str(path),
                tofile=f"{path} ({verb}ped)",
            )
        )
        for change in plan.changes:
            print(f"mcpeek: would have {change}", file=sys.stderr)
        return 0
    original = before.encode("utf-8")
    try:
        backup = keep_backup(path, original)
        replace_atomically(path, plan.text.encode("utf-8"), expected=original)
        write_state(path, plan.state)
    except ConfigError as exc:
        raise UsageError(f"{path}: {exc}") from None
    except OSError as exc:
        raise UsageError(f"{exc.filename or path}: {exc.strerror or exc}") from None
    for change in plan.changes:
        print(f"mcpeek: {change}", file=sys.stderr)
    print(
        f"mcpeek: {path} rewritten; the previous version is in {backup}; "
        "restart the client (or reload its MCP servers) to apply",
        file=sys.stderr,
    )
    return 0


def _create(path: Path, plan: Plan, *, dry_run: bool) -> int:
    """A config that was not there yet (``--add-inspector``): shown, or written anew."""
    if dry_run:
        lines = plan.text.splitlines(keepends=True)
        sys.stdout.writelines(difflib.unified_diff([], lines, "/dev/null", str(path)))
        return 0
    try:
        create_config(path, plan.text.encode("utf-8"))
    except ConfigError as exc:
        raise UsageError(f"{path}: {exc}") from None
    except OSError as exc:
        raise UsageError(f"{path}: {exc.strerror or exc}") from None
    for change in plan.changes:
        print(f"mcpeek: {change}", file=sys.stderr)
    print(f"mcpeek: {path} created; restart the client to apply", file=sys.stderr)
    return 0
