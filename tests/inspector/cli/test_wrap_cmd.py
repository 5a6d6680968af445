"""``mcpeek wrap``/``unwrap`` on real files: backups, modes, links, diffs, bad input."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mcpeek.inspector.cli.main import main
from tests.conftest import mcpeek_argv, needs

SAMPLES = Path(__file__).parents[2] / "data" / "clients"


@pytest.fixture
def desktop(tmp_path: Path) -> Path:
    """A copy of the Claude Desktop sample, mode 0640 (a mode wrap must keep)."""
    path = tmp_path / "claude_desktop_config.json"
    shutil.copyfile(SAMPLES / "claude-desktop.json", path)
    path.chmod(0o640)
    return path


def wrap(*args: str) -> int:
    return main(["wrap", *args])


def unwrap(*args: str) -> int:
    return main(["unwrap", *args])


def test_wrap_keeps_a_private_backup_and_the_files_mode(
    desktop: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    original = desktop.read_bytes()
    assert wrap("claude-desktop", "--config", str(desktop)) == 0
    assert desktop.read_bytes() != original
    assert desktop.stat().st_mode & 0o777 == 0o640
    backup = desktop.with_name(desktop.name + ".mcpeek-backup")
    assert backup.read_bytes() == original
    assert backup.stat().st_mode & 0o777 == 0o600
    err = capsys.readouterr().err
    assert "mcpeek: wrapped weather (mcpServers)" in err and str(backup) in err
    assert sys.executable in desktop.read_text()
    # unwrap: the original back, and a second backup beside the first, which stays
    assert unwrap("claude-desktop", "--config", str(desktop)) == 0
    assert desktop.read_bytes() == original
    assert backup.read_bytes() == original
    second = desktop.with_name(desktop.name + ".mcpeek-backup.1")
    assert second.read_bytes() != original and sys.executable in second.read_text()
    assert sorted(p.name for p in desktop.parent.iterdir()) == sorted(
        [desktop.name, backup.name, second.name]
    )  # no temporary file left behind


def test_nothing_to_do_writes_nothing(desktop: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert unwrap("claude-desktop", "--config", str(desktop)) == 0
    assert "nothing to unwrap" in capsys.readouterr().err
    assert [p.name for p in desktop.parent.iterdir()] == [desktop.name]


def test_a_linked_config_stays_a_link(tmp_path: Path, desktop: Path) -> None:
    link = tmp_path / "link.json"
    link.symlink_to(desktop)
    assert wrap("claude-desktop", "--config", str(link)) == 0
    assert link.is_symlink() and sys.executable in desktop.read_text()


def test_dry_run_prints_a_diff_that_patch_applies_and_writes_nothing(
    tmp_path: Path, desktop: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    needs(shutil.which("patch") is not None, "patch(1)")
    original = desktop.read_bytes()
    assert wrap("claude-desktop", "--config", str(desktop), "--dry-run", "--add-inspector") == 0
    out, err = capsys.readouterr()
    assert desktop.read_bytes() == original
    assert [p.name for p in desktop.parent.iterdir()] == [desktop.name]  # no backup either
    assert out.startswith(f"--- {desktop}\n+++ {desktop} (wrapped)\n@@ ")
    assert "mcpeek: would have wrapped filesystem (mcpServers)" in err
    copy = tmp_path / "copy.json"
    shutil.copyfile(desktop, copy)
    # The documented way: `patch CONFIG < DIFF` (the header's absolute name makes the
    # bare `patch -p0 < DIFF` refuse).
    with pytest.raises(SystemExit):
        wrap("--help")
    assert "patch CONFIG < DIFF" in " ".join(capsys.readouterr().out.split())
    subprocess.run(["patch", "-s", str(copy)], input=out.encode(), check=True)
    assert wrap("claude-desktop", "--config", str(desktop), "--add-inspector") == 0
    assert copy.read_bytes() == desktop.read_bytes()


def test_a_malformed_config_is_refused_in_one_line_and_left_untouched(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "mcp.json"
    config.write_text('{\n  "mcpServers": {\n    "a": {"command": "x",}\n  }\n}\n')
    before = config.stat()
    for command in ("wrap", "unwrap"):
        assert main([command, "claude-code", "--config", str(config)]) == 2
        err = capsys.readouterr().err
        assert err == (
            f"mcpeek: {config}: 3:26: a trailing comma, which this client's JSON does not allow\n"
        )
    after = config.stat()
    assert (after.st_mtime_ns, after.st_size) == (before.st_mtime_ns, before.st_size)
    assert [p.name for p in tmp_path.iterdir()] == ["mcp.json"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["wrap"], "wrap needs a CLIENT"),
        (["wrap", "cursor", "--config", "{missing}"], "{missing}: no such file"),
        (["wrap", "cursor", "--config", "{dir}"], "{dir}: is a directory"),
        (["wrap", "claude-desktop", "--config", "{good}", "--server", "x"], "no server named x"),
        (["wrap", "--list", "cursor", "--dry-run"], "--list takes no other option"),
        (["wrap", "--list", "--config", "{good}"], "needs the CLIENT"),
        (["unwrap", "vscode", "--config", "{binary}"], "not UTF-8"),
        (["wrap", "cursor", "--config", "/dev/null"], "/dev/null: is not a regular file"),
        (["unwrap", "cursor", "--config", "/dev/null"], "/dev/null: is not a regular file"),
        # A key twice: wrap and unwrap would not know which entry is meant (and unwrap
        # would not give the same bytes back).
        (["wrap", "claude-desktop", "--config", "{dup}"], "the server 'a' is there twice"),
        (["unwrap", "claude-desktop", "--config", "{dup}"], "the server 'a' is there twice"),
        (["wrap", "claude-desktop", "--config", "{dup_field}"], "'a' has 'args' twice"),
        # Each wrapped server would fail to start recording into a file.
        (["wrap", "claude-desktop", "--config", "{good}", "--home", "{good}"], "not a directory"),
    ],
)
def test_bad_input_exits_2_with_one_line(
    tmp_path: Path,
    desktop: Path,
    args: list[str],
    message: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    (tmp_path / "binary.json").write_bytes(b'{"servers": {"\xff": 1}}')
    twice = '{"mcpServers": {"a": {"command": "x"}, "a": {"command": "y"}}}'
    (tmp_path / "dup.json").write_text(twice)
    (tmp_path / "dup_field.json").write_text('{"mcpServers": {"a": {"args": [], "args": []}}}')
    names = {
        "dup": str(tmp_path / "dup.json"),
        "dup_field": str(tmp_path / "dup_field.json"),
        "missing": str(tmp_path / "nope.json"),
        "dir": str(tmp_path),
        "good": str(desktop),
        "binary": str(tmp_path / "binary.json"),
    }
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()}
    assert main([a.format(**names) for a in args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("mcpeek: ") and err.count("\n") == 1
    assert message.format(**names) in err
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before  # left untouched


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
@pytest.mark.parametrize("command", ["wrap", "unwrap"])
def test_a_fifo_config_is_refused_without_waiting_for_a_writer(
    command: str, tmp_path: Path
) -> None:
    fifo = tmp_path / "mcp.json"
    os.mkfifo(fifo)
    # A subprocess: the old reader waited for a writer forever.
    argv = mcpeek_argv(command, "claude-desktop", "--config", str(fifo))
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    reason = "is not a regular file (a FIFO or a device?), not a config file"
    assert proc.stderr == f"mcpeek: {fifo}: {reason}\n"


def test_an_unknown_client_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["wrap", "notepad"])
    assert exc.value.code == 2
    assert "invalid choice: 'notepad'" in capsys.readouterr().err


def test_list_shows_each_clients_config_and_its_servers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    (home / ".cursor").mkdir(parents=True)
    (project / ".vscode").mkdir(parents=True)
    shutil.copyfile(SAMPLES / "cursor.json", home / ".cursor" / "mcp.json")
    shutil.copyfile(SAMPLES / "vscode.json", project / ".vscode" / "mcp.json")
    (project / ".mcp.json").write_text("{oops")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.chdir(project)
    assert wrap("vscode", "--server", "memory") == 0
    capsys.readouterr()
    assert wrap("--list") == 0
    lines = capsys.readouterr().out.splitlines()
    assert f"claude-code       {project / '.mcp.json'}  (unreadable: 1:2: " in lines[1]
    at = lines.index(f"cursor            {home / '.cursor' / 'mcp.json'}")
    assert lines[at + 1].split() == ["server-name", "stdio", "not", "wrapped"]
    assert lines[at + 2].split()[:3] == ["remote", "http", "not"]
    at = lines.index(f"vscode            {project / '.vscode' / 'mcp.json'}")
    assert lines[at + 1].split() == ["memory", "stdio", "wrapped"]
    assert lines[at + 2].split() == ["python-server", "stdio", "not", "wrapped"]
    assert any(line.endswith("(not found)") and "claude_desktop_config" in line for line in lines)
    assert os.path.exists(project / ".vscode" / "mcp.json.mcpeek-backup")
    (project / "empty.json").write_text('{"mcpServers": {}}')
    assert wrap("--list", "claude-code", "--config", str(project / "empty.json")) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"claude-code       {project / 'empty.json'}",
        "    (no servers)",
    ]


def test_wrap_http_keeps_the_original_urls_in_a_private_state_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / ".mcp.json"
    shutil.copyfile(SAMPLES / "claude-code.json", config)
    original = config.read_bytes()
    assert wrap("claude-code", "--config", str(config), "--http", "7100") == 0
    err = capsys.readouterr().err
    assert (
        "mcpeek: shared-server needs  mcpeek http --upstream https://example.com/mcp "
        "--listen 127.0.0.1:7100\n"
    ) in err
    state = tmp_path / ".mcp.json.mcpeek-wrap.json"
    assert state.stat().st_mode & 0o777 == 0o600
    assert wrap("--list", "claude-code", "--config", str(config)) == 0
    assert (
        "wrapped: needs  mcpeek http --upstream https://mcp.example.com/sse --listen 127.0.0.1:7101"
    ) in capsys.readouterr().out
    assert unwrap("claude-code", "--config", str(config)) == 0
    assert config.read_bytes() == original
    assert not state.exists()
    state.write_text("[1]")
    assert unwrap("claude-code", "--config", str(config)) == 2
    assert capsys.readouterr().err.endswith(f"{state}: not a mcpeek wrap state file\n")
    assert wrap("claude-code", "--config", str(config), "--http", "70000") == 2


def test_add_inspector_starts_a_config_that_is_not_there_yet(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / ".mcp.json"
    assert wrap("claude-code", "--config", str(config), "--add-inspector", "--dry-run") == 0
    assert capsys.readouterr().out.startswith(f"--- /dev/null\n+++ {config}\n")
    assert not config.exists()
    assert wrap("claude-code", "--config", str(config), "--add-inspector") == 0
    assert config.stat().st_mode & 0o777 == 0o600
    entry = json.loads(config.read_text())["mcpServers"]["mcpeek"]
    assert entry == {"command": sys.executable, "args": ["-I", "-m", "mcpeek", "mcp"]}
    assert wrap("claude-code", "--config", str(tmp_path / "no" / "x.json"), "--add-inspector") == 2
    assert "no such directory" in capsys.readouterr().err
    assert wrap("claude-code", "--config", str(tmp_path / "y.json")) == 2  # nothing to add


def test_a_full_disk_leaves_the_config_and_no_half_backup(desktop: Path) -> None:
    """RLIMIT_FSIZE makes writes past the limit fail (EFBIG, as ENOSPC would): the
    config stays as it was, and no backup cut short is left to be restored from."""
    import resource

    from tests.inspector.cli.test_capture_durability import fresh_bytecode

    padded = json.loads(desktop.read_text())
    padded["padding"] = "x" * 20_000  # a config bigger than the limit
    desktop.write_text(json.dumps(padded))
    original = desktop.read_bytes()
    limit = 8192
    fresh_bytecode()
    proc = subprocess.run(
        mcpeek_argv("wrap", "claude-desktop", "--config", str(desktop)),
        capture_output=True,
        text=True,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit)),
        timeout=120,
    )
    assert proc.returncode == 2
    assert proc.stderr == f"mcpeek: {desktop}: File too large\n"
    assert desktop.read_bytes() == original
    assert [p.name for p in desktop.parent.iterdir()] == [desktop.name]
