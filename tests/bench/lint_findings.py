#!/usr/bin/env python3
"""Dump every finding the rules make, or compare them with a dump: a speed-up of the
rules must not change a byte of what they find.

    python tests/bench/lint_findings.py dump DIR [--messages N] [--no-tests]
    python tests/bench/lint_findings.py compare DIR [--messages N] [--no-tests]

A plain script, not a test. ``dump`` writes into DIR, and ``compare`` writes beside
DIR (``DIR.new``) and then compares byte for byte:

1. ``mcpeek lint --format json`` of the benchmark capture (``analyze.py``'s, with
   ``--messages`` messages, 100k by default) and of every committed capture
   (``captures/*.jsonl`` and any ``*.jsonl`` under ``tests/`` that lint reads),
   each as it is and under every ``--spec`` version (which changes which rules
   apply), with its exit code;
2. unless ``--no-tests``: every violation reported by every rule engine built
   while ``pytest tests/rules`` runs (the records the rule tests build are
   the most varied traffic there is, misbehaviour included), by test.

Exit code 0 when everything is identical, 1 when something differs (each
difference named), 2 when DIR is not there to compare with.
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import analyze  # the benchmark capture

ROOT = analyze.ROOT
PYTHON = sys.executable
VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28")
PLUGIN = "lint_findings_plugin"  # tests/bench/lint_findings_plugin.py
TESTS_FILE = "rule-tests.jsonl"
#: no pytest cache; the property tests' examples the same every run
PYTEST_OPTIONS = ["-p", "no:cacheprovider", "--hypothesis-seed=0"]


def captures() -> list[Path]:
    committed = sorted((ROOT / "captures").glob("*.jsonl"))
    under_tests = sorted(
        p for p in (ROOT / "tests").rglob("*.jsonl") if "node_modules" not in p.parts
    )
    return committed + under_tests


def lint(path: Path, out: Path, spec: str | None, *, shown: str | None = None) -> None:
    """``mcpeek lint --format json`` of ``path`` into ``out``; ``shown``: the name the
    output gives the file instead of its (temporary) path."""
    argv = [PYTHON, "-m", "mcpeek", "lint", "--format", "json", str(path)]
    if spec is not None:
        argv[4:4] = ["--spec", spec]
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, check=False)
    if done.returncode == 2:  # not a capture lint reads: nothing to compare
        return
    text = done.stdout
    if shown is not None:
        text = text.replace(_json_string(str(path)), _json_string(shown))
    out.write_bytes(text + f"exit {done.returncode}\n".encode())


def _json_string(text: str) -> bytes:
    return json.dumps(text, ensure_ascii=False).encode()


def dump(into: Path, messages: int, with_tests: bool) -> None:
    into.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="mcpeek-findings-") as tmp:
        bench = Path(tmp) / "bench.jsonl"
        analyze.write_capture(bench, messages)
        lint(bench, into / "bench.json", None, shown="bench.jsonl")
        for path in captures():
            relative = path.relative_to(ROOT)  # (lint names the file as it is given)
            name = str(relative).replace("/", "__")
            lint(relative, into / f"{name}.json", None)
            for spec in VERSIONS:
                lint(relative, into / f"{name}--spec-{spec}.json", spec)
    if with_tests:
        done = subprocess.run(
            [PYTHON, "-m", "pytest", "tests/rules", "-q", "-p", PLUGIN, *PYTEST_OPTIONS],
            cwd=ROOT,
            env={**_env(), "MCPEEK_FINDINGS_OUT": str(into / TESTS_FILE)},
            capture_output=True,
            text=True,
            check=False,
        )
        lines = done.stdout.strip().splitlines()
        print(f"  pytest tests/rules: {lines[-1] if lines else done.stderr.strip()[-200:]}")


def _env() -> dict[str, str]:
    path = os.environ.get("PYTHONPATH", "")
    here = str(Path(__file__).resolve().parent)
    return {**os.environ, "PYTHONPATH": f"{here}:{path}" if path else here}


def compare(base: Path, messages: int, with_tests: bool) -> int:
    if not base.is_dir():
        print(f"lint_findings: no dump at {base}", file=sys.stderr)
        return 2
    new = base.with_name(base.name + ".new")
    for old in new.glob("*"):
        old.unlink()
    dump(new, messages, with_tests)
    names = sorted({p.name for p in base.iterdir()} | {p.name for p in new.iterdir()})
    differ = [n for n in names if not (base / n).exists() or not (new / n).exists()]
    differ += [
        n
        for n in names
        if n not in differ and not _same(base / n, new / n, by_test=n == TESTS_FILE)
    ]
    for name in names:
        state = "DIFFERS" if name in differ else "identical"
        size = (new / name).stat().st_size if (new / name).exists() else 0
        print(f"  {state:<10}{name}  ({size:,} bytes)")
    print(f"{len(names) - len(differ)} of {len(names)} files identical")
    return 1 if differ else 0


def _same(old: Path, new: Path, *, by_test: bool) -> bool:
    """Byte for byte; the rule tests' file line by line for the tests ``old`` has (a test
    added since has nothing to be compared with: it is named, not counted against)."""
    if not by_test:
        return filecmp.cmp(old, new, shallow=False)
    before = old.read_bytes().splitlines()
    known = {json.loads(line)["test"] for line in before}
    after = new.read_bytes().splitlines()
    added = [json.loads(line)["test"] for line in after if json.loads(line)["test"] not in known]
    if added:
        print(f"  ({len(added)} rule tests added since the dump, not compared: {added[0]}…)")
    return before == [line for line in after if json.loads(line)["test"] in known]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=("dump", "compare"))
    parser.add_argument("dir", type=Path)
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--no-tests", action="store_true", help="skip the rule tests' findings")
    args = parser.parse_args()
    if args.action == "dump":
        dump(args.dir, args.messages, not args.no_tests)
        return 0
    return compare(args.dir, args.messages, not args.no_tests)


if __name__ == "__main__":
    sys.exit(main())
