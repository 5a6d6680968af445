"""The dependency direction of docs/architecture.md, checked in a fresh interpreter."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
TOP_LEVEL_FOLDERS = ("inspector", "rules", "tui")

CORE_MODULES = [
    "mcpeek.inspector.records",
    "mcpeek.inspector.jsonrpc",
    "mcpeek.inspector.capture",
    "mcpeek.inspector.pipeline",
    "mcpeek.inspector.proxy.stdio",
    "mcpeek.inspector.cli.main",
    "mcpeek.inspector.testing.wire",
]


def loaded_after_import(modules: list[str]) -> set[str]:
    code = (
        "import sys, json\n"
        f"for m in {modules!r}: __import__(m)\n"
        "print(json.dumps(sorted(sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, check=True, text=True)
    return set(json.loads(out.stdout))


def test_the_core_never_imports_textual() -> None:
    loaded = loaded_after_import(CORE_MODULES)
    assert not {m for m in loaded if m == "textual" or m.startswith("textual.")}
    assert "mcpeek.tui" not in loaded


@pytest.mark.parametrize("forbidden", ["textual", "aiohttp"])
def test_rules_stay_pure(forbidden: str) -> None:
    loaded = loaded_after_import(["mcpeek.rules"])
    assert forbidden not in loaded


def _top_level_imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    found = []
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        found += [
            f"{path}:{node.lineno}: {n}" for n in names if n.split(".")[0] in TOP_LEVEL_FOLDERS
        ]
    return found


def test_everything_imports_the_one_mcpeek_namespace() -> None:
    # A clone has inspector/, rules/ and tui/ on sys.path too (the editable
    # install puts the root there); importing them by those names would load a
    # second copy of each module and lose the protection against shadowing.
    sources = [p for d in (*TOP_LEVEL_FOLDERS, "tests") for p in (REPO / d).rglob("*.py")]
    offenders = [hit for path in sources for hit in _top_level_imports(path)]
    assert offenders == []


def test_every_part_of_the_inspector_is_core_or_a_front_end_in_the_contracts() -> None:
    # A module added under inspector/ and named in no contract is checked by none:
    # the core contract lists the core (its sources) and the front ends (forbidden).
    import tomllib

    contracts = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"][
        "contracts"
    ]
    core = next(c for c in contracts if c["name"].startswith("The headless core"))
    named = {m.rsplit(".", 1)[-1] for m in core["source_modules"] + core["forbidden_modules"]}
    parts = {
        p.stem if p.is_file() else p.name
        for p in (REPO / "inspector").iterdir()
        if (p.suffix == ".py" and p.stem not in ("__init__", "__main__"))
        or (p.is_dir() and (p / "__init__.py").exists())
    }
    assert parts - named == set()
