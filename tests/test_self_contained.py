"""The repository stands on its own: no file points outside it, and what a test
needs that no repository can hold is skipped locally but fails under CI."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import needs

REPO = Path(__file__).resolve().parents[1]
NOT_OURS = {".git", ".venv", "__pycache__", "vendor", "node_modules", ".mypy_cache", ".ruff_cache"}
# Written in pieces so that this file does not match itself.
OUTSIDE = re.compile(
    r"\.\./shared|/work"
    r"/shared|shared/(spec|RULES|DESIGN|CAPTURE)"
    r"|\b(RULES|DESIGN|CAPTURE-FORMAT)\.md"
    r'|/ "sha'
    r'red"'  # a path built as a join with that folder's name
)


def repository_texts() -> list[Path]:
    out = []
    for path in REPO.rglob("*"):
        parts = set(path.relative_to(REPO).parts)
        if path.is_file() and not parts & NOT_OURS and path.suffix in (".py", ".md", ".toml"):
            out.append(path)
    return out


def test_no_file_refers_to_a_path_outside_the_repository() -> None:
    found = [
        f"{path.relative_to(REPO)}:{number}: {line.strip()}"
        for path in repository_texts()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if OUTSIDE.search(line)
    ]
    assert found == []


def test_a_missing_need_skips_locally(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    needs(True, "nothing")
    with pytest.raises(pytest.skip.Exception):
        needs(False, "a device")


def test_a_missing_need_fails_under_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="a device"):
        needs(False, "a device")
