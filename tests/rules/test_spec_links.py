"""Spec links follow the conversation's version (2025-11-25 pages for 2025-11-25)."""

from __future__ import annotations

import re

from mcpeek.inspector.testing.records import RecordBuilder
from mcpeek.rules.spec_links import LEGACY_SECTIONS
from mcpeek.rules.testing import lint_records
from tests.conftest import VENDORED_SPEC
from tests.rules.test_envelope import initialize

SPEC = VENDORED_SPEC  # tests/vendor/spec: see its README


def anchors(version: str, page: str) -> set[str]:
    """The heading anchors of a vendored spec page (as the site derives them)."""
    text = (SPEC / version / "docs" / f"{page}.mdx").read_text()
    found = set()
    for heading in re.findall(r"^#+\s+(.*)$", text, re.MULTILINE):
        slug = re.sub(r"[^a-z0-9 _-]", "", heading.strip().lower().replace("`", ""))
        found.add(re.sub(r"\s+", "-", slug))
    return found


def test_every_mapped_section_exists_in_both_versions() -> None:
    for modern, legacy in LEGACY_SECTIONS.items():
        for version, section in (("2026-07-28", modern), ("2025-11-25", legacy)):
            page, anchor = section.split("#")
            assert anchor in anchors(version, page), (version, section)


def test_a_2025_11_25_conversation_gets_2025_11_25_links() -> None:
    b = RecordBuilder()
    initialize(b, "2025-11-25")
    b.request("tools/call", {"name": "t"}, id=1)
    b.notify("notifications/progress", {"progressToken": "nobody", "progress": 1})
    (v,) = [v for v in lint_records(b.records) if v.rule == "progress.unknown-token"]
    assert v.spec == (
        "https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/progress"
        "#behavior-requirements"
    )
    b = RecordBuilder(modern=True)
    b.request("tools/call", {"name": "t"}, id=1)
    b.notify("notifications/progress", {"progressToken": "nobody", "progress": 1})
    (v,) = [v for v in lint_records(b.records) if v.rule == "progress.unknown-token"]
    assert "/2026-07-28/basic/patterns/progress#" in v.spec
