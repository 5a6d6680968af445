"""The catalog in docs/rules.md and the registered rules are the same set.

docs/rules.md is generated from the registry (``python -m
mcpeek.inspector.tools.rules_doc``) and committed, so every change to a rule ID, its
severity or its era shows in review as a change to the published catalog.
These tests name what differs when the committed page and the registry part
(test_rules_doc.py checks the page as a whole).
"""

from __future__ import annotations

import re
from pathlib import Path

from mcpeek import rules
from mcpeek.rules.base import listed_era

RULES_MD = Path(__file__).resolve().parents[2] / "docs" / "rules.md"
ROW = re.compile(
    r"^\| `([a-z0-9-]+\.[a-z0-9.-]+)` \| (error|warning|info)(?: / (?:error|warning|info))?"
    r"(?: \((modern|legacy)\))? \|"
)


def catalog_rows() -> dict[str, tuple[str, str]]:
    rows = {}
    for line in RULES_MD.read_text().splitlines():
        match = ROW.match(line)
        if match:
            rows[match.group(1)] = (match.group(2), match.group(3) or "both")
    assert len(rows) > 60, "the catalog table format changed: fix ROW"
    return rows


def test_every_catalog_id_is_implemented() -> None:
    missing = sorted(set(catalog_rows()) - set(rules.catalog()))
    assert missing == [], f"catalog IDs with no rule: {missing}"


def test_every_rule_is_in_the_catalog() -> None:
    extra = sorted(set(rules.catalog()) - set(catalog_rows()))
    assert extra == [], f"rules that are not in the catalog: {extra}"


def test_severity_and_era_match_the_catalog() -> None:
    rows = catalog_rows()
    wrong = {
        rule_id: ((cls.severity, listed_era(cls)), rows[rule_id])
        for rule_id, cls in rules.catalog().items()
        if rule_id in rows and (cls.severity, listed_era(cls)) != rows[rule_id]
    }
    assert wrong == {}


def test_every_rule_links_to_a_spec_section() -> None:
    for rule_id, cls in rules.catalog().items():
        assert re.fullmatch(
            r"https://modelcontextprotocol\.io/specification/"
            r"\d{4}-\d{2}-\d{2}/[a-z0-9/-]+#[a-z0-9-]+",
            cls.spec,
        ), rule_id
