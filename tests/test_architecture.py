"""The dependency direction of DESIGN.md, checked in a fresh interpreter."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

CORE_MODULES = [
    "inspector.records",
    "inspector.jsonrpc",
    "inspector.capture",
    "inspector.pipeline",
    "inspector.proxy.stdio",
    "inspector.cli.main",
    "inspector.testing.wire",
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
    assert "tui" not in loaded


@pytest.mark.parametrize("forbidden", ["textual", "aiohttp"])
def test_rules_stay_pure(forbidden: str) -> None:
    loaded = loaded_after_import(["rules"])
    assert forbidden not in loaded
