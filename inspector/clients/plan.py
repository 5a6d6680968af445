"""What wrapping or unwrapping does to one config file's text, without touching the file.

:func:`plan_wrap` and :func:`plan_unwrap` return the new text and, in
words, what changed and what was left alone; the CLI decides whether to show
a diff or write. :func:`survey` says which servers a config holds and which
are wrapped (``wrap --list``).
"""

from __future__ import annotations

import shlex
from collections.abc import Collection
from dataclasses import dataclass, field

from mcpeek.inspector.clients import entries, remote
from mcpeek.inspector.clients.jsonc import JsoncError, Member, Object, parse, string_value
from mcpeek.inspector.clients.known import INSPECTOR_NAME, Client
from mcpeek.inspector.clients.state import WrapState


class ConfigError(Exception):
    """The config cannot be used as it is; ``str()`` is the reason (with LINE:COLUMN
    when the text is not JSON)."""


@dataclass
class Plan:
    text: str
    #: One line per server changed: ``wrapped weather (mcpServers)``.
    changes: list[str] = field(default_factory=list)
    #: One line per server left alone on purpose, and why.
    notes: list[str] = field(default_factory=list)
    #: For each HTTP server left alone: (its name, its URL, a free port), to print the
    #: ``mcpeek http`` command that would inspect it.
    http_left: list[tuple[str, str, int]] = field(default_factory=list)
    #: What the state file is to hold once the plan is carried out.
    state: WrapState = field(default_factory=WrapState)


@dataclass(frozen=True)
class Server:
    table: str
    name: str
    kind: str
    state: str


def root_of(text: str, client: Client) -> Object:
    try:
        root = parse(text, jsonc=client.jsonc)
    except JsoncError as exc:
        raise ConfigError(str(exc)) from None
    if not isinstance(root, Object):
        raise ConfigError(str(JsoncError("the config is not a JSON object", text, root.start)))
    return root


def _servers(
    root: Object, client: Client, names: Collection[str] | None
) -> list[tuple[str, Member]]:
    """(table label, server member) for each server, only those in ``names`` if given."""
    found = [
        (label, server)
        for label, table in client.tables(root)
        for server in table.value.members  # type: ignore[union-attr]
    ]
    _refuse_duplicates(found)
    if names is not None:
        missing = sorted(set(names) - {server.key for _, server in found})
        if missing:
            raise ConfigError(f"no server named {', '.join(missing)} in this config")
        found = [(label, server) for label, server in found if server.key in names]
    return found


def _refuse_duplicates(servers: list[tuple[str, Member]]) -> None:
    """A key twice in a server map, or in a server's entry, is a malformed config:
    JSON readers keep one or the other, and what wrap edits and unwrap restores by
    name would no longer be one entry (unwrap would not give the bytes back)."""
    seen: set[tuple[str, str]] = set()
    for label, server in servers:
        if (label, server.key) in seen:
            raise ConfigError(f"{label}: the server {server.key!r} is there twice; keep one")
        seen.add((label, server.key))
        if isinstance(server.value, Object):
            keys = [member.key for member in server.value.members]
            twice = next((key for i, key in enumerate(keys) if key in keys[:i]), None)
            if twice is not None:
                raise ConfigError(
                    f"{label}: the server {server.key!r} has {twice!r} twice; keep one"
                )


def survey(text: str, client: Client, state: WrapState | None = None) -> list[Server]:
    """Every server in the config, with its transport and whether it is wrapped."""
    listed: list[Server] = []
    root = root_of(text, client)
    for label, member in _servers(root, client, None):
        entry, kind = member.value, entries.kind_of(member.value)
        if entries.is_inspector(entry):
            shown = "mcpeek mcp (the inspector)"
        elif kind == "stdio" and isinstance(entry, Object):
            shown = "not wrapped"
            if entries.wrapped_command_index(entry) is not None:
                shown = "wrapped"
            elif entries.runs_mcpeek(entry, "stdio"):
                shown = "runs mcpeek stdio already, not as wrap writes it"
        elif kind == "http" and (known := _proxied_now(text, label, member, state)):
            shown = f"wrapped: needs  {known.command()}"
        elif kind == "http":
            shown = "not wrapped (HTTP: see wrap --http)"
        else:
            shown = "not an MCP server entry mcpeek knows"
        listed.append(Server(label, member.key, kind, shown))
    return listed


def plan_wrap(
    text: str,
    client: Client,
    names: Collection[str] | None = None,
    *,
    add_inspector: bool = False,
    python: str | None = None,
    stdio_options: tuple[str, ...] = (),
    state: WrapState | None = None,
    http_port: int | None = None,
) -> Plan:
    """Wrap the stdio servers (those in ``names``, else all): each runs
    ``mcpeek stdio STDIO_OPTIONS -- CMD ARGS``. With ``http_port``, point the
    HTTP servers at local proxies from that port on. ``state``: the state file's."""
    root = root_of(text, client)
    plan = Plan(text, state=state.copy() if state else WrapState())
    edits: list[entries.Edit] = []
    launcher = entries.stdio_launcher("stdio", *stdio_options, "--", python=python)
    # Ports the config's own URLs name (every server's, named or not): never a proxy's.
    taken = remote.taken_ports(_urls(_servers(root, client, None)))
    for label, member in _servers(root, client, names):
        entry, kind = member.value, entries.kind_of(member.value)
        where = f"{member.key} ({label})"
        if entries.is_inspector(entry):
            continue
        if kind == "http" and _proxied_now(text, label, member, plan.state):
            plan.notes.append(f"{where} already points at its mcpeek http")
        elif kind == "http" and isinstance(entry, Object) and http_port is not None:
            edit, outcome = remote.point_at_proxy(
                text, label, member, plan.state.proxied, http_port, taken
            )
            if edit is not None:
                edits.append(edit)
                # a change reads after "would have" (--dry-run) as on its own
                plan.changes.append(f"pointed {where} at a local mcpeek http")
            else:
                plan.notes.append(f"left {where} as it is: {outcome}")
        elif kind == "http" and isinstance(entry, Object):
            url = entry.get("url")
            upstream = string_value(url.value) if url else None
            if (why := remote.proxyable(upstream)) is not None or upstream is None:
                plan.notes.append(f"left {where} as it is: {why}")  # no command to advise
                continue
            used = [port for _, _, port in plan.http_left]
            port = remote.free_port(plan.state.proxied, remote.FIRST_PORT, {*taken, *used})
            plan.http_left.append((member.key, upstream, port))
            plan.notes.append(f"left {where} as it is: an HTTP server (see below)")
        elif kind != "stdio" or not isinstance(entry, Object):
            plan.notes.append(f"left {where} as it is: neither a command nor a URL")
        elif entries.wrapped_command_index(entry) is not None:
            plan.notes.append(_already_wrapped(where, entry, stdio_options))
        elif entries.runs_mcpeek(entry, "stdio"):  # (by hand, without "--": see entries)
            plan.notes.append(f"left {where} as it is: it runs mcpeek stdio already")
        elif not _command(entry).strip():
            plan.notes.append(f"left {where} as it is: its command is empty")
        elif (args := entry.get("args")) is not None and entries.strings(args.value) is None:
            plan.notes.append(f"left {where} as it is: its args are not a list of strings")
        else:
            edits += entries.wrap_edits(text, entry, launcher)
            plan.changes.append(f"wrapped {where}")
            if args is None and (label, member.key) not in plan.state.args_added:
                plan.state.args_added.append((label, member.key))
    if add_inspector:
        edits += _inspector_edits(text, root, client, python, plan)
    plan.text = entries.apply(text, edits)
    return plan


def _command(entry: Object) -> str:
    """The ``command`` of a stdio entry, as a string ("" when it is none)."""
    command = entry.get("command")
    return (string_value(command.value) if command else None) or ""


def _already_wrapped(where: str, entry: Object, options: tuple[str, ...]) -> str:
    """The note for a wrapped entry; it says when the options asked for (``--home``)
    are not the ones it runs with: wrap leaves a wrapped entry as it is."""
    current = entries.wrapped_options(entry)
    if not options or list(options) == current:
        return f"{where} is already wrapped"
    now = f"with {shlex.join(current)}" if current else "without options"
    return (
        f"{where} is already wrapped {now}: {shlex.join(options)} not applied "
        f"(unwrap it first to change them)"
    )


def _urls(servers: list[tuple[str, Member]]) -> list[str]:
    """The string ``url`` of each server entry."""
    urls = []
    for _, member in servers:
        url = member.value.get("url") if isinstance(member.value, Object) else None
        if url is not None and isinstance(value := string_value(url.value), str):
            urls.append(value)
    return urls


def _inspector_edits(
    text: str, root: Object, client: Client, python: str | None, plan: Plan
) -> list[entries.Edit]:
    tables = client.tables(root)
    table = tables[0][1] if tables and tables[0][0] == client.servers_key else None
    servers = table.value if table is not None and isinstance(table.value, Object) else None
    if servers is not None and servers.get(INSPECTOR_NAME) is not None:
        plan.notes.append(f"{client.servers_key} already has a server named {INSPECTOR_NAME}")
        return []
    if servers is None and root.get(client.servers_key) is not None:
        plan.notes.append(f"not adding {INSPECTOR_NAME}: {client.servers_key} is not an object")
        return []
    entry = entries.inspector_entry_text(client.stdio_fields, python)
    plan.changes.append(f"added {INSPECTOR_NAME} ({client.servers_key}): mcpeek mcp")
    if servers is not None:
        return [entries.add_member_edit(text, servers, INSPECTOR_NAME, entry)]
    return [entries.add_member_edit(text, root, client.servers_key, _new_table(entry))]


def _new_table(entry: str) -> str:
    return "{" + entries.quoted(INSPECTOR_NAME) + ": " + entry + "}"


def _proxied_now(
    text: str, label: str, member: Member, state: WrapState | None
) -> remote.Proxied | None:
    """The record of an HTTP entry that still points at its local proxy."""
    known = remote.find(state.proxied, label, member.key) if state else None
    url = member.value.get("url") if isinstance(member.value, Object) else None
    if known is None or url is None or text[url.value.start : url.value.end] != known.local:
        return None
    return known


def plan_unwrap(
    text: str,
    client: Client,
    names: Collection[str] | None = None,
    state: WrapState | None = None,
) -> Plan:
    """Unwrap the servers (those in ``names``, else all), the proxied HTTP ones too;
    ``state``: the state file's."""
    root = root_of(text, client)
    plan = Plan(text, state=state.copy() if state else WrapState())
    edits: list[entries.Edit] = []
    for label, member in _servers(root, client, names):
        entry = member.value
        where = f"{member.key} ({label})"
        if not isinstance(entry, Object):
            continue
        if entries.wrapped_command_index(entry) is not None:
            added = (label, member.key) in plan.state.args_added
            if added:
                plan.state.args_added.remove((label, member.key))
            edits += entries.unwrap_edits(text, entry, args_added=added)
            plan.changes.append(f"unwrapped {where}")
        elif edit := remote.point_back(text, label, member, plan.state.proxied):
            edits.append(edit)
            plan.changes.append(f"gave {where} its own url back")
        elif member.key == INSPECTOR_NAME and entries.is_inspector(entry):
            edits.append(_remove_inspector(text, root, client, member))
            plan.changes.append(f"removed {where}: mcpeek mcp")
    plan.text = entries.apply(text, edits)
    return plan


def _remove_inspector(text: str, root: Object, client: Client, member: Member) -> entries.Edit:
    """Remove the inspector's entry; and its table too when wrap made the table for it."""
    for _, table in client.tables(root):
        obj = table.value
        if not isinstance(obj, Object) or member not in obj.members:
            continue
        made_by_wrap = text[table.key_start : obj.end] == (
            entries.quoted(client.servers_key)
            + ": "
            + _new_table(text[member.value.start : member.value.end])
        )
        if made_by_wrap and table in root.members:
            return entries.remove_member_edit(text, root, table)
        return entries.remove_member_edit(text, obj, member)
    raise AssertionError("the inspector's entry is in no table")
