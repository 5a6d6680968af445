"""docs/rules.md is what ``python -m mcpeek.inspector.tools.rules_doc`` makes of the registry."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcpeek import rules
from mcpeek.inspector.tools import rules_doc


def test_the_committed_page_is_up_to_date() -> None:
    committed = rules_doc.DEFAULT_OUT.read_text(encoding="utf-8")
    assert committed == rules_doc.render(), f"docs/rules.md is stale: run {rules_doc.REGENERATE}"


def test_every_rule_has_one_row_with_its_link() -> None:
    page = rules_doc.render()
    for rule_id, cls in rules.catalog().items():
        rows = [line for line in page.splitlines() if line.startswith(f"| `{rule_id}` |")]
        assert len(rows) == 1 and rows[0].endswith(f"({cls.spec}) |"), rule_id


def test_check_tells_a_stale_page_from_a_fresh_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page = tmp_path / "rules.md"
    assert rules_doc.main(["--out", str(page)]) == 0
    assert rules_doc.main(["--check", "--out", str(page)]) == 0
    page.write_text(page.read_text().replace("| error", "| warning", 1))
    assert rules_doc.main(["--check", "--out", str(page)]) == 1
    assert "stale" in capsys.readouterr().err


def test_outside_a_clone_it_asks_for_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Installed from a wheel, docs/ is not beside the package: no file is written there.
    monkeypatch.setattr(rules_doc, "DEFAULT_OUT", tmp_path / "site-packages" / "docs" / "rules.md")
    assert rules_doc.main([]) == 2
    assert "give --out FILE" in capsys.readouterr().err
    assert not (tmp_path / "site-packages").exists()
