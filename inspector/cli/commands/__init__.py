"""The subcommands; importing this package registers every one of them."""

from inspector.cli.commands import stdio

__all__ = ["stdio"]
