"""Run rules over records built in a test (shipped with the package, for rule authors).

b = RecordBuilder(modern=True)
b.request("tools/call", {"name": "x"}, id=1)
b.result(1, {"content": []})
assert fired(b.records, "meta.server-info-missing")
"""

from __future__ import annotations

from collections.abc import Iterable

from mcpeek.inspector.analysis import Analyzer
from mcpeek.inspector.records import Record
from mcpeek.rules.base import Rule
from mcpeek.rules.engine import Reported
from mcpeek.rules.verify import VerifiedRuleEngine


def lint_records(
    records: Iterable[Record],
    *,
    spec: str | None = None,
    rules: Iterable[type[Rule]] | None = None,
    timeout: float = 60.0,
) -> list[Reported]:
    """Every violation the rules find in ``records`` (header first), in report order.

    The engine is a :class:`~mcpeek.rules.verify.VerifiedRuleEngine`: besides a
    rule's own findings, a test then also fails (``inspector.gate-unsound``) if
    the conformance gate hid one of them.
    """
    found: list[Reported] = []
    engine = VerifiedRuleEngine(found.append, spec=spec, rules=rules)
    analyzer = Analyzer([engine], timeout=timeout)
    analyzer.feed_all(records)
    analyzer.finish()
    return found


def fired(records: Iterable[Record], rule_id: str, *, spec: str | None = None) -> list[Reported]:
    """The violations of one rule (running every rule, as lint does)."""
    return [v for v in lint_records(records, spec=spec) if v.rule == rule_id]
