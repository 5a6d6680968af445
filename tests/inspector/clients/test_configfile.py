"""Backups and the one-step replace of a client's config."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcpeek.inspector.clients.configfile import keep_backup, read_config, replace_atomically
from mcpeek.inspector.clients.plan import ConfigError


def test_backups_take_the_next_free_name_and_are_private(tmp_path: Path) -> None:
    config = tmp_path / "mcp.json"
    config.write_text("{}")
    names = [keep_backup(config, f"v{n}".encode()).name for n in range(3)]
    assert names == [
        "mcp.json.mcpeek-backup",
        "mcp.json.mcpeek-backup.1",
        "mcp.json.mcpeek-backup.2",
    ]
    assert [(tmp_path / n).read_bytes() for n in names] == [b"v0", b"v1", b"v2"]
    assert all((tmp_path / n).stat().st_mode & 0o777 == 0o600 for n in names)


def test_a_link_planted_at_the_backup_name_is_not_followed(tmp_path: Path) -> None:
    config, victim = tmp_path / "mcp.json", tmp_path / "victim"
    victim.write_text("keep me")
    (tmp_path / "mcp.json.mcpeek-backup").symlink_to(victim)
    assert keep_backup(config, b"x").name == "mcp.json.mcpeek-backup.1"
    assert victim.read_text() == "keep me"


def test_a_file_changed_since_it_was_read_is_not_replaced(tmp_path: Path) -> None:
    config = tmp_path / "claude.json"
    config.write_bytes(b"saved by the client meanwhile")
    with pytest.raises(ConfigError, match="changed while mcpeek was editing it"):
        replace_atomically(config, b"new", expected=b"what mcpeek read")
    assert config.read_bytes() == b"saved by the client meanwhile"
    assert [p.name for p in tmp_path.iterdir()] == ["claude.json"]  # no temporary left
    replace_atomically(config, b"new", expected=b"saved by the client meanwhile")
    assert config.read_bytes() == b"new"


def test_read_config_reasons(tmp_path: Path) -> None:
    (tmp_path / "bad").write_bytes(b"\xef\xbb\xbf{}\xff")
    with pytest.raises(ConfigError, match="not UTF-8"):
        read_config(tmp_path / "bad")
    with pytest.raises(ConfigError, match="no such file"):
        read_config(tmp_path / "missing")
