"""``mcpeek wrap CLIENT [--server NAME]... [--config PATH] [--dry-run] [--add-inspector]``.

Route a client's MCP servers through mcpeek by editing the client's own
config: each stdio server's command gets ``mcpeek stdio --`` in front of it
(as ``/path/to/python -I -m mcpeek stdio -- CMD ARGS``: the interpreter
mcpeek runs on, so the client needs no ``mcpeek`` on its PATH). Wrapping
twice changes nothing (an entry that runs ``mcpeek stdio`` already, written by
hand, is left as it is too); ``mcpeek unwrap`` gives back the original bytes. An
HTTP server is left as it is, with the ``mcpeek http`` command that would
inspect it; with ``--http`` its url is pointed at that local ``mcpeek http``
(which you start: the command is printed), and the original url is kept
in ``FILE.mcpeek-wrap.json`` for unwrap. The previous file is kept beside
it (``FILE.mcpeek-backup``); ``--dry-run`` prints the change as a unified
diff instead. Comments, key
order, unknown keys and indentation are kept: only the changed values are
rewritten.

``--home DIR`` makes the wrapped servers record into DIR (a client starts
servers without your shell's ``MCPEEK_HOME``).

A config that does not exist yet is created by ``--add-inspector`` (its
directory must exist).

``mcpeek wrap --list [CLIENT]`` shows every client's config on this machine
(or the one named) and which of its servers are wrapped. ``--add-inspector``
also adds a server named ``mcpeek`` that runs ``mcpeek mcp``.

CLIENT: claude-desktop, claude-code (the project's .mcp.json),
claude-code-user (~/.claude.json), cursor (~/.cursor/mcp.json),
cursor-project (.cursor/mcp.json), vscode (.vscode/mcp.json), vscode-user.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from mcpeek.inspector.cli.base import Command, UsageError, directory
from mcpeek.inspector.cli.client_config import add_common_arguments, carry_out, config_of, load
from mcpeek.inspector.clients.configfile import read_config, read_state
from mcpeek.inspector.clients.known import CLIENTS, Places
from mcpeek.inspector.clients.plan import ConfigError, plan_wrap, survey
from mcpeek.inspector.clients.remote import FIRST_PORT as FIRST_HTTP_PORT
from mcpeek.inspector.clients.remote import local_url, proxy_command, shown_url


class WrapCommand(Command):
    name = "wrap"
    order = 75
    help = "route an MCP client's servers through mcpeek (edits its config; unwrap undoes it)"
    description = __doc__ or ""

    def configure(self, parser: argparse.ArgumentParser) -> None:
        add_common_arguments(parser, "wrap")
        parser.add_argument(
            "--add-inspector",
            action="store_true",
            help="also add a server named mcpeek that runs `mcpeek mcp`",
        )
        parser.add_argument(
            "--http",
            nargs="?",
            type=int,
            const=FIRST_HTTP_PORT,
            metavar="PORT",
            help="also point each HTTP server's url at a local mcpeek http, on ports from "
            f"PORT on (default {FIRST_HTTP_PORT}); prints the command that starts each",
        )
        parser.add_argument(
            "--home",
            type=directory,
            metavar="DIR",
            help="the wrapped servers record their captures in DIR (mcpeek stdio --home DIR; "
            "default: the capture directory)",
        )
        parser.add_argument(
            "--list",
            action="store_true",
            help="show which clients' configs exist here and which servers are wrapped",
        )

    def run(self, args: argparse.Namespace) -> int:
        if args.list:
            wrapping = (args.server, args.dry_run, args.add_inspector, args.home, args.http)
            if any(option not in (None, False) for option in wrapping):
                raise UsageError("--list takes no other option than CLIENT and --config")
            if args.config is not None and args.client is None:
                raise UsageError("--list --config PATH needs the CLIENT whose config PATH is")
            return list_configs(args)
        if args.http is not None and not 0 < args.http < 65536:
            raise UsageError("--http PORT must be a port number, 1 to 65535")
        client, path = config_of(args, "wrap")
        # --add-inspector may start a config of its own: "{}" plus the entry.
        before, state = load(path, missing_ok=args.add_inspector)
        try:
            plan = plan_wrap(
                "{}\n" if before is None else before,
                client,
                args.server and set(args.server),
                add_inspector=args.add_inspector,
                stdio_options=home_options(args.home),
                state=state,
                http_port=args.http,
            )
        except ConfigError as exc:
            raise UsageError(f"{path}: {exc}") from None
        code = carry_out(path, before, plan, dry_run=args.dry_run, verb="wrap")
        for name, url, port in plan.http_left:
            print_http_advice(name, url, port)
        for record in plan.state.proxied:
            print(f"mcpeek: {record.server} needs  {record.command()}", file=sys.stderr)
        return code


def home_options(home: Path | None) -> tuple[str, ...]:
    """``mcpeek stdio``'s options for ``--home``, with the directory made absolute (the
    client starts servers in a working directory of its own). A ``home`` that is there
    and no directory is refused: every wrapped server would fail to start on it."""
    if home is None:
        return ()
    directory = home.expanduser().absolute()
    if directory.exists() and not directory.is_dir():  # (missing: made at the first run)
        raise UsageError(f"--home {home}: not a directory")
    return ("--home", str(directory))


def print_http_advice(name: str, url: str, port: int) -> None:
    """The exact command that would put mcpeek in front of an HTTP server, and the URL
    the client's entry would then name (mcpeek serves the upstream's path)."""
    local = shown_url(local_url(url, port))
    command = proxy_command(url, f"127.0.0.1:{port}")
    print(
        f"mcpeek: to inspect {name}, run  {command}  and point its url at {local} "
        "(wrap --http does that)",
        file=sys.stderr,
    )


def list_configs(args: argparse.Namespace) -> int:
    """Each client (or the one named): its config path and, when the file is there,
    each server's state."""
    places = Places.here()
    for client in CLIENTS:
        if args.client is not None and client.name != args.client:
            continue
        path = args.config if args.config is not None else client.locate(places)
        try:
            servers = survey(read_config(path), client, read_state(path))
        except ConfigError as exc:
            state = "not found" if str(exc) == "no such file" else f"unreadable: {exc}"
            print(f"{client.name:<17} {path}  ({state})")
            continue
        print(f"{client.name:<17} {path}")
        if not servers:
            print("    (no servers)")
        for server in servers:
            where = "" if server.table == client.servers_key else f"  [{server.table}]"
            print(f"    {server.name:<24} {server.kind:<6} {server.state}{where}")
    return 0
