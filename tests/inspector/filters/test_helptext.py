"""The help screen's material, generated from the registry."""

from __future__ import annotations

from mcpeek.inspector.filters import FILTER_SYNTAX, OPERATORS, compile_filter, filter_help


def test_one_row_per_operator_in_registry_order() -> None:
    rows = filter_help()
    assert [code for code, _, _, _ in rows] == [f"~{code}" for code in OPERATORS]
    assert rows[0][0] == "~m"
    for code, arg, description, example in rows:
        assert description and example.startswith(code)
        assert isinstance(arg, str)


def test_every_example_compiles() -> None:
    for _, _, _, example in filter_help():
        assert str(compile_filter(example))


def test_the_syntax_text_names_the_combinators_and_bare_words() -> None:
    for piece in ("!", "&", "|", "(", "quick search", "ignore case", '"..."'):
        assert piece in FILTER_SYNTAX
    assert max(len(line) for line in FILTER_SYNTAX.splitlines()) <= 80


def test_the_package_stays_headless() -> None:
    import subprocess
    import sys

    code = "import sys, mcpeek.inspector.filters; print('textual' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
