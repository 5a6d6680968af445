"""The subcommands; importing this package registers every one of them."""

from inspector.cli.commands import lint, rules_cmd, show, stdio

__all__ = ["lint", "rules_cmd", "show", "stdio"]
