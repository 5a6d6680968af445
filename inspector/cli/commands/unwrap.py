"""``mcpeek unwrap CLIENT [--server NAME]... [--config PATH] [--dry-run]``.

Undo ``mcpeek wrap``: each wrapped stdio server gets its own command back,
byte for byte as it was written, an HTTP server that ``wrap --http`` pointed
at a local proxy gets its own url back, and the ``mcpeek`` entry that
``--add-inspector`` added is removed. The rest of the file is not touched.
The previous file is kept beside it (``FILE.mcpeek-backup``, or the next free
``.N``); ``--dry-run`` prints the change as a unified diff instead.
"""

from __future__ import annotations

import argparse

from mcpeek.inspector.cli.base import Command, UsageError
from mcpeek.inspector.cli.client_config import add_common_arguments, carry_out, config_of, load
from mcpeek.inspector.clients.plan import ConfigError, plan_unwrap


class UnwrapCommand(Command):
    name = "unwrap"
    order = 76
    help = "give an MCP client's config back its original server commands"
    description = __doc__ or ""

    def configure(self, parser: argparse.ArgumentParser) -> None:
        add_common_arguments(parser, "unwrap")

    def run(self, args: argparse.Namespace) -> int:
        client, path = config_of(args, "unwrap")
        before, state = load(path)
        assert before is not None  # (a missing file is an error without missing_ok)
        try:
            plan = plan_unwrap(before, client, args.server and set(args.server), state)
        except ConfigError as exc:
            raise UsageError(f"{path}: {exc}") from None
        return carry_out(path, before, plan, dry_run=args.dry_run, verb="unwrap")
