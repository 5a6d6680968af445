"""The building blocks: the operator registry, memoised text tests, quoting, errors."""

from __future__ import annotations

import re
import warnings

import pytest

from mcpeek.inspector.filters import OPERATORS, FilterError, Operator
from mcpeek.inspector.filters.base import (
    MEMO_LIMIT,
    BadArgument,
    Memo,
    Namespace,
    compile_regex,
    is_plain,
    quote,
)
from mcpeek.inspector.filters.shapes import FieldRegex, RegexOperator


def test_every_operator_is_registered_by_its_code() -> None:
    assert set(OPERATORS) == {
        "a", "b", "c", "d", "e", "id", "k", "m", "mark", "n", "p", "r", "s", "t", "v",
    }  # fmt: skip
    assert all(cls.code == code for code, cls in OPERATORS.items())
    # a shared base has no code of its own
    assert not {FieldRegex, RegexOperator} & set(OPERATORS.values())


def test_a_code_cannot_be_registered_twice() -> None:
    with pytest.raises(TypeError, match="~m is defined twice"):

        class Again(Operator):  # pragma: no cover
            code = "m"

    assert OPERATORS["m"].__name__ == "Method"


def test_memo_runs_the_test_once_per_value() -> None:
    seen: list[str] = []

    def test(value: str) -> bool:
        seen.append(value)
        return value.startswith("tools/")

    memo = Memo(test)
    assert [memo[v] for v in ("tools/call", "ping", "tools/call", None, 3)] == [
        True,
        False,
        True,
        False,
        False,
    ]
    assert seen == ["tools/call", "ping"]  # None and non-strings never reach the test


def test_memo_starts_afresh_when_full() -> None:
    memo = Memo(lambda value: True)
    for i in range(MEMO_LIMIT + 10):
        assert memo[str(i)]
    assert len(memo) <= MEMO_LIMIT + 2
    assert memo[None] is False


def test_namespace_names_values() -> None:
    ns = Namespace()
    assert ns.add("x") == "_k0" and ns.add(frozenset()) == "_k1"
    assert ns.values == {"_k0": "x", "_k1": frozenset()}


def test_regexes_ignore_case_and_errors_are_bad_arguments() -> None:
    assert compile_regex("TOOLS", "m").search("tools/call")
    with pytest.raises(BadArgument) as caught:
        compile_regex("(", "m")
    assert caught.value.reason == "bad regex '(' for ~m"
    assert caught.value.more.startswith(": missing )")
    with pytest.raises(BadArgument):
        compile_regex("a{99999999999}", "b")


def test_regex_warnings_stay_quiet() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert compile_regex("[[a]", "b").search("[")


def test_is_plain() -> None:
    assert is_plain("tools/call") and is_plain("get_weather") and is_plain("-32602")
    assert not is_plain("a.b") and not is_plain("x|y") and not is_plain("^a")


@pytest.mark.parametrize(
    ("text", "argument", "quoted"),
    [
        ("tools/call", False, "tools/call"),
        ("a b", False, '"a b"'),
        ("a|b", False, '"a|b"'),
        ("a|b", True, "a|b"),  # an argument keeps |
        ("(a)", True, '"(a)"'),
        ("~m", False, '"~m"'),
        ("!x", False, '"!x"'),
        ('say "hi"', False, '"say \\"hi\\""'),
        ("back\\slash", False, "back\\slash"),
        ("back\\ slash", False, '"back\\\\ slash"'),
        ("", True, '""'),
    ],
)
def test_quote(text: str, argument: bool, quoted: str) -> None:
    assert quote(text, argument=argument) == quoted


def test_filter_error_reads_reason_column_more() -> None:
    error = FilterError("unknown operator ~x", 5, "; known: ~a")
    assert str(error) == "unknown operator ~x at column 5; known: ~a"
    assert (error.reason, error.column, error.more) == ("unknown operator ~x", 5, "; known: ~a")
    assert isinstance(error, ValueError)
    assert re.search("column 5", str(error))
