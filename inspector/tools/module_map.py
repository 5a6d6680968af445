"""Write the module map, ``docs/modules.md``, from the modules' own docstrings.

    python -m mcpeek.inspector.tools.module_map [--check] [--out FILE]

A newcomer's map of the code: every package of ``inspector/``, ``rules/`` and
``tui/`` with the first paragraph of its ``__init__`` docstring, then each of
its modules with the first sentence of its docstring. The docstrings are the
one source (read with :mod:`ast`, nothing is imported), so the map cannot drift
from the code: a test (``tests/tools/test_module_map.py``) fails when the
committed page is stale or a module has no docstring. ``--check`` as for
``rules_doc``.
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

from mcpeek.inspector.tools import generated_page

# The folder that holds inspector/, rules/ and tui/: a clone's root, or the
# installed ``mcpeek`` package (whose docs/ is then absent).
SOURCE_ROOT = Path(__file__).resolve().parents[2]
TOP_PACKAGES = ("inspector", "rules", "tui")
DEFAULT_OUT = SOURCE_ROOT / "docs" / "modules.md"
REGENERATE = "python -m mcpeek.inspector.tools.module_map"

INTRO = f"""\
# Where things are: the module map

<!-- Generated from the modules' docstrings by `{REGENERATE}`: do not edit by hand. -->

Every package and module of mcpeek, with what its docstring says it is for.
How the packages fit together (the layers, the data flow, the one capture
pipeline) is in [architecture.md](architecture.md); the checks themselves are
listed in [rules.md](rules.md). Everything imports as `mcpeek.<path>`:
`inspector/proxy/http.py` is `mcpeek.inspector.proxy.http`. That name comes
from the `mcpeek/` folder at the top of the clone, a shim package: symbolic
links to `inspector/`, `rules/` and `tui/`, plus its own `__init__.py` (the
one import name) and `__main__.py` (`python -m mcpeek`); it has no module of
its own to list here (see [architecture.md](architecture.md)).
"""

# A sentence ends at a full stop followed by white space and a capital, a quote or
# a bracket ("e.g. the" does not end one), or at the end of the paragraph.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`(\"'])")
# A Sphinx role (:class:`~pkg.Name`, :func:`name`) reads as its literal; ``~`` keeps
# only the last dotted part, as Sphinx shows it.
_ROLE = re.compile(r":[a-z]+:`(~?)([^`]+)`")


def _literal(match: re.Match[str]) -> str:
    target = match.group(2)
    return f"`{target.rsplit('.', 1)[-1] if match.group(1) else target}`"


def first_paragraph(doc: str) -> str:
    """The docstring's first paragraph on one line, reST literals as Markdown ones."""
    paragraph = doc.strip().split("\n\n", 1)[0]
    return _ROLE.sub(_literal, " ".join(paragraph.split()).replace("``", "`"))


def first_sentence(doc: str) -> str:
    return _SENTENCE_END.split(first_paragraph(doc), 1)[0]


def docstring(path: Path) -> str | None:
    """``path``'s module docstring, or None (none, or a file Python cannot parse)."""
    try:
        return ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
    except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
        return None


def packages(root: Path = SOURCE_ROOT) -> Iterator[Path]:
    """Every package folder under the top packages, parents before children."""
    for top in TOP_PACKAGES:
        start = root / top
        if (start / "__init__.py").is_file():
            yield start
            yield from sorted(
                path.parent
                for path in start.rglob("__init__.py")
                if path.parent != start and "__pycache__" not in path.parts
            )


def modules(package: Path) -> list[Path]:
    """The package's own modules (not its subpackages), ``__init__`` left out."""
    return sorted(path for path in package.glob("*.py") if path.name != "__init__.py")


def undocumented(root: Path = SOURCE_ROOT) -> list[str]:
    """Modules and packages with no docstring, as paths from ``root``."""
    missing = []
    for package in packages(root):
        for path in [package / "__init__.py", *modules(package)]:
            if not docstring(path):
                missing.append(path.relative_to(root).as_posix())
    return missing


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def render(root: Path = SOURCE_ROOT) -> str:
    """The whole page, from the source files as they are now."""
    parts = [INTRO]
    count = 0
    for package in packages(root):
        name = package.relative_to(root).as_posix()
        intro = first_paragraph(docstring(package / "__init__.py") or "(no docstring)")
        parts.append(f"\n## `{name}/`\n\n{intro}\n")
        members = modules(package)
        if not members:
            continue
        parts.append("\n| module | what it is for |\n|---|---|\n")
        for path in members:
            summary = first_sentence(docstring(path) or "(no docstring)")
            parts.append(f"| `{path.name}` | {_cell(summary)} |\n")
            count += 1
    parts.append(f"\n{count} modules.\n")
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
