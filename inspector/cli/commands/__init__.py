"""The subcommands; importing this package registers every one of them."""

from inspector.cli.commands import show, stdio

__all__ = ["show", "stdio"]
