"""docs/modules.md is what ``python -m mcpeek.inspector.tools.module_map`` makes of the code."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcpeek.inspector.tools import module_map


def test_the_committed_page_is_up_to_date() -> None:
    committed = module_map.DEFAULT_OUT.read_text(encoding="utf-8")
    stale = f"docs/modules.md is stale: run {module_map.REGENERATE}"
    assert committed == module_map.render(), stale


def test_every_module_and_package_says_what_it_is_for() -> None:
    assert module_map.undocumented() == []


def test_every_module_has_one_row_under_its_package() -> None:
    page = module_map.render()
    for package in module_map.packages():
        heading = f"## `{package.relative_to(module_map.SOURCE_ROOT).as_posix()}/`"
        section = page.split(heading + "\n", 1)[1].split("\n## ", 1)[0]
        for path in module_map.modules(package):
            assert section.count(f"| `{path.name}` |") == 1, path


def test_a_new_module_or_a_changed_docstring_shows(tmp_path: Path) -> None:
    pkg = tmp_path / "inspector"
    pkg.mkdir()
    (pkg / "__init__.py").write_text('"""The core.\n\nMore words."""\n')
    (pkg / "relay.py").write_text('"""Relays bytes, e.g. a pipe. Then more.\n\nDetail."""\n')
    (pkg / "bare.py").write_text("x = 1\n")
    page = module_map.render(tmp_path)
    assert "## `inspector/`\n\nThe core.\n" in page
    assert "| `relay.py` | Relays bytes, e.g. a pipe. |" in page
    assert "| `bare.py` | (no docstring) |" in page
    assert module_map.undocumented(tmp_path) == ["inspector/bare.py"]


def test_roles_read_as_literals() -> None:
    doc = "Feeds an :class:`~mcpeek.inspector.analysis.analyzer.Analyzer` and :func:`run`."
    assert module_map.first_sentence(doc) == "Feeds an `Analyzer` and `run`."


def test_check_tells_a_stale_page_from_a_fresh_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page = tmp_path / "modules.md"
    assert module_map.main(["--check", "--out", str(page)]) == 1  # none yet
    assert module_map.main(["--out", str(page)]) == 0
    assert module_map.main(["--check", "--out", str(page)]) == 0
    page.write_text(page.read_text().replace("| `records.py` |", "| `record.py` |", 1))
    assert module_map.main(["--check", "--out", str(page)]) == 1
    assert "stale" in capsys.readouterr().err
