"""The subcommands; importing this package registers every one of them."""

from inspector.cli.commands import http, lint, rules_cmd, show, stdio

__all__ = ["http", "lint", "rules_cmd", "show", "stdio"]
