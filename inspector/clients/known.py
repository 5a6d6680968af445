"""The MCP clients whose configs mcpeek can wrap: where each keeps its servers.

From each client's own documentation:

- **Claude Desktop**: ``claude_desktop_config.json`` in
  ``~/Library/Application Support/Claude/`` (macOS) or ``%APPDATA%\\Claude\\``
  (Windows); Linux builds are unofficial and use ``$XDG_CONFIG_HOME/Claude/``.
  Strict JSON, servers under ``mcpServers``.
- **Claude Code**: the project's ``.mcp.json`` (``mcpServers``), and the user
  config ``~/.claude.json``, which holds user-scope servers under
  ``mcpServers`` and local-scope ones under ``projects.<path>.mcpServers``.
  Strict JSON (Claude Code writes the file itself).
- **Cursor**: ``~/.cursor/mcp.json`` (global) and ``.cursor/mcp.json`` in a
  project, ``mcpServers``. Read as JSONC: Cursor's editor is VS Code's.
- **VS Code**: ``.vscode/mcp.json`` in the workspace and ``mcp.json`` in the
  user profile (``Code/User/`` under the platform's config directory), servers
  under ``servers``, JSONC (comments, trailing commas); a stdio entry
  carries ``"type": "stdio"``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from mcpeek.inspector.clients.jsonc import Member, Object

#: The name under which ``--add-inspector`` adds ``mcpeek mcp``.
INSPECTOR_NAME = "mcpeek"


@dataclass(frozen=True)
class Places:
    """What a config's default location depends on (the caller's machine, or a test's)."""

    home: Path
    cwd: Path
    environ: Mapping[str, str]
    platform: str

    @classmethod
    def here(cls) -> Places:
        return cls(Path.home(), Path.cwd(), os.environ, sys.platform)

    def app_config(self) -> Path:
        """The platform's per-user application config directory."""
        if self.platform == "darwin":
            return self.home / "Library" / "Application Support"
        if self.platform == "win32":
            return Path(self.environ.get("APPDATA") or self.home / "AppData" / "Roaming")
        return Path(self.environ.get("XDG_CONFIG_HOME") or self.home / ".config")


@dataclass(frozen=True)
class Client:
    name: str
    title: str
    #: The top-level key of the servers table: ``mcpServers``, or VS Code's ``servers``.
    servers_key: str
    #: Comments and trailing commas allowed (VS Code's JSONC).
    jsonc: bool
    locate: Callable[[Places], Path]
    #: ``~/.claude.json``: also ``projects.<path>.mcpServers`` (local scope).
    per_project: bool = False
    #: Fields a new stdio entry needs besides command and args (VS Code's ``type``).
    stdio_fields: tuple[tuple[str, str], ...] = ()

    def tables(self, root: Object) -> list[tuple[str, Member]]:
        """Each servers table in the file, as (a label for people, its member)."""
        found: list[tuple[str, Member]] = []
        top = root.get(self.servers_key)
        if top is not None and isinstance(top.value, Object):
            found.append((self.servers_key, top))
        projects = root.get("projects") if self.per_project else None
        if projects is not None and isinstance(projects.value, Object):
            for project in projects.value.members:
                table = (
                    project.value.get(self.servers_key)
                    if isinstance(project.value, Object)
                    else None
                )
                if table is not None and isinstance(table.value, Object):
                    found.append((f"projects[{project.key}]", table))
        return found


CLIENTS: tuple[Client, ...] = (
    Client(
        "claude-desktop",
        "Claude Desktop",
        "mcpServers",
        jsonc=False,
        locate=lambda p: p.app_config() / "Claude" / "claude_desktop_config.json",
    ),
    Client(
        "claude-code",
        "Claude Code (project .mcp.json)",
        "mcpServers",
        jsonc=False,
        locate=lambda p: p.cwd / ".mcp.json",
    ),
    Client(
        "claude-code-user",
        "Claude Code (user ~/.claude.json)",
        "mcpServers",
        jsonc=False,
        locate=lambda p: p.home / ".claude.json",
        per_project=True,
    ),
    Client(
        "cursor",
        "Cursor (global)",
        "mcpServers",
        jsonc=True,
        locate=lambda p: p.home / ".cursor" / "mcp.json",
    ),
    Client(
        "cursor-project",
        "Cursor (project)",
        "mcpServers",
        jsonc=True,
        locate=lambda p: p.cwd / ".cursor" / "mcp.json",
    ),
    Client(
        "vscode",
        "VS Code (workspace .vscode/mcp.json)",
        "servers",
        jsonc=True,
        locate=lambda p: p.cwd / ".vscode" / "mcp.json",
        stdio_fields=(("type", "stdio"),),
    ),
    Client(
        "vscode-user",
        "VS Code (user profile)",
        "servers",
        jsonc=True,
        locate=lambda p: p.app_config() / "Code" / "User" / "mcp.json",
        stdio_fields=(("type", "stdio"),),
    ),
)

CLIENT_NAMES = tuple(client.name for client in CLIENTS)


def client_named(name: str) -> Client | None:
    for client in CLIENTS:
        if client.name == name:
            return client
    return None
