"""Small modules with one job: every module of the core, the rules and the viewer
stays within 300 lines (a module that grows past it is split, as docs/modules.md
maps them)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIMIT = 300


def test_every_module_of_the_core_rules_and_viewer_is_300_lines_at_most() -> None:
    sizes = {
        path.relative_to(ROOT).as_posix(): len(path.read_text(encoding="utf-8").splitlines())
        for package in ("inspector", "rules", "tui")
        for path in (ROOT / package).rglob("*.py")
    }
    assert len(sizes) > 200  # (the packages were found)
    too_long = {name: lines for name, lines in sizes.items() if lines > LIMIT}
    assert too_long == {}
