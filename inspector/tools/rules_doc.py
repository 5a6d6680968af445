"""Write the rule catalog's page, ``docs/rules.md``, from the rule registry.

    python -m mcpeek.inspector.tools.rules_doc [--check] [--out FILE]

The registry (:func:`rules.catalog`) is the one source of the rule IDs, their
severity, era, summary and spec link; the page is generated from it so that
the two cannot disagree, and a test (``tests/tools/test_rules_doc.py``) fails
when the committed page is stale. Rules are grouped by the module that
implements them, in the order of the modules' names; each group opens with
the first paragraph of that module's docstring.

``--check`` writes nothing: exit 1 (and a one-line message) when the page
differs from what the registry gives. Exit 2 for a file that cannot be written
or read.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from mcpeek.inspector.tools import generated_page

DEFAULT_OUT = Path(__file__).resolve().parents[2] / "docs" / "rules.md"
REGENERATE = "python -m mcpeek.inspector.tools.rules_doc"

INTRO = f"""\
# The rule catalog

<!-- Generated from the rule registry by `{REGENERATE}`: do not edit by hand. -->

Every check mcpeek runs (live in the proxies, in `mcpeek lint`, in the viewer)
is a rule with a stable ID of the form `area.what-went-wrong`. The IDs are a
contract with capture files, CI scripts and filters (`~r`): a rule is never
renamed, only retired. `mcpeek rules` lists the same catalog on the terminal.

**Severity** follows the words of the specification: `error` for a MUST or
MUST NOT broken, `warning` for a SHOULD or SHOULD NOT broken, `info` for
something allowed but worth seeing (a deprecated feature, an odd pattern).

**Era**: `modern` rules fire only in 2026-07-28 conversations (stateless,
per-request `_meta`), `legacy` ones only in 2025-11-25 and earlier
conversations (the `initialize` handshake); the others fire in both. The era
is read from the traffic, per conversation: a request whose `_meta` carries
`io.modelcontextprotocol/protocolVersion` 2026-07-28 or later, or a
`server/discover` the server answers with a result or a recognised modern
error, makes it modern; an `initialize` makes it legacy (also after a
`server/discover` probe that a legacy server rejected). The schema rules use
the schema of the version the conversation negotiated or declared;
`--spec VERSION` forces one.

Each rule links to the section of the specification it enforces.
"""


def _first_paragraph(doc: str | None) -> str:
    paragraph = (doc or "").strip().split("\n\n", 1)[0]
    return " ".join(paragraph.split()).replace("``", "`")


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def render() -> str:
    """The whole page, from the registry as it is imported now."""
    from mcpeek import rules
    from mcpeek.rules.base import Rule, listed_era

    by_module: dict[str, list[type[Rule]]] = {}
    for cls in rules.catalog().values():
        by_module.setdefault(cls.__module__, []).append(cls)
    parts = [INTRO]
    for module in sorted(by_module):
        doc = sys.modules[module].__doc__
        source = module.removeprefix("mcpeek.").replace(".", "/") + ".py"
        parts.append(f"\n## `{source}`\n\n{_first_paragraph(doc)}\n\n")
        parts.append("| ID | severity | what | spec |\n|---|---|---|---|\n")
        for cls in by_module[module]:
            era = listed_era(cls)
            severity = cls.severity + ("" if era == "both" else f" ({era})")
            section = cls.spec.split("/specification/", 1)[-1]
            parts.append(
                f"| `{cls.id}` | {severity} | {_cell(cls.summary)} | [{section}]({cls.spec}) |\n"
            )
    parts.append(f"\n{len(rules.catalog())} rules.\n")
    return "".join(parts)


def main(argv: Sequence[str] | None = None) -> int:
    return generated_page.main(
        argv,
        prog=REGENERATE,
        description=__doc__.splitlines()[0],
        default_out=DEFAULT_OUT,
        render=render,
    )


if __name__ == "__main__":
    sys.exit(main())
