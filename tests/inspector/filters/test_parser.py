"""The grammar: combinators, precedence, quoting, errors with columns, filter_rows."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpeek.inspector.filters import Filter, FilterError, compile_filter, filter_rows
from mcpeek.inspector.filters.parser import MAX_DEPTH
from mcpeek.inspector.views.session import SessionModel
from tests.inspector.filters.conftest import Rows, build_session, label


def test_empty_text_matches_everything(rows: Rows, session: SessionModel) -> None:
    for text in ("", "   ", "\t\n"):
        flt = compile_filter(text)
        assert flt.matches_everything and str(flt) == "~a" and flt.text == text
        assert list(filter_rows(flt, session.items)) == list(range(len(session.items)))


def test_not_and_or(rows: Rows) -> None:
    assert rows("!~s complete") == rows("~a") - rows("~s complete")
    assert rows("~m tools/call & ~v") == {"get_weather"}
    assert rows("~m tools/call ~v") == {"get_weather"}  # side by side means &
    assert rows("~s error | ~mark") == {"summarise", "sampling/createMessage"}
    assert rows("!!~p") == {"get_weather"}
    assert rows("! ! ! ~p") == rows("!~p")


def test_precedence_is_not_then_and_then_or(rows: Rows) -> None:
    # ~p | ~s error & ~v warning  ==  ~p | (~s error & ~v warning)
    assert rows("~p | ~s error & ~v warning") == {"get_weather", "summarise"}
    assert rows("(~p | ~s error) & ~v error") == {"summarise"}
    # !~m tools/call & ~v  ==  (!~m tools/call) & ~v
    assert rows("!~m tools/call & ~v") == {"tools/list", "summarise"}
    assert rows("!(~m tools/call & ~v)") == rows("~a") - {"get_weather"}
    # implicit & binds like &: a b | c == (a b) | c
    assert rows("~m tools/call ~p | ~mark") == {"get_weather", "sampling/createMessage"}


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("~m tools/call & ~v error", "~m tools/call & ~v error"),
        ("a b | !c (d|e)", "a & b | !c & (d | e)"),
        ("((~p))", "~p"),
        ("!(~p | ~mark)", "!(~p | ~mark)"),
        ("!!~p", "~p"),
        ("~s error|unanswered", "~s error|unanswered"),
        ("~m tools/(call|list)", '~m "tools/(call|list)"'),
        ("~b 'it''s'", "~b it & s"),
        ('~b "he said \\"hi\\""', '~b "he said \\"hi\\""'),
        ("~b 'a\\.b'", "~b a\\.b"),
        ("'~p'", '"~p"'),  # a quoted word is a quick search, even if it looks like ~p
        ('"a b"', '"a b"'),
        ("~v   warning", "~v warning"),
    ],
)
def test_canonical_text_reads_back_the_same(text: str, shown: str) -> None:
    flt = compile_filter(text)
    assert str(flt) == shown
    assert str(compile_filter(str(flt))) == shown
    assert repr(flt) == f"Filter({text!r})"


def test_quoting(rows: Rows) -> None:
    assert rows('~b "Temperature: 21"') == {"get_weather"}
    assert rows("~b 'Temperature: 21'") == {"get_weather"}
    assert rows('~b "\\"code\\":-32602"') == {"summarise"}  # \" is a quote
    assert rows('~b "notes\\.txt"') == {"notes.txt"}  # other backslashes stay: a regex escape
    assert rows("\"get_w\" | 'list'") == {"get_weather", "tools/list"}
    assert rows('~m "tools/(call|list)$" ~p') == {"get_weather"}
    assert rows("~b ''") == rows("~a")  # an empty regex matches any message


def test_bare_words_search_method_and_name_as_plain_text(rows: Rows) -> None:
    assert rows("weather") == {"get_weather"}  # the name
    assert rows("SAMPLING") == {"sampling/createMessage"}  # the method, any case
    assert rows("tools/") == {"get_weather", "tools/list", "deploy", "slow_tool"}
    assert rows("notes.txt") == {"notes.txt"}
    assert rows("n.tes") == set()  # not a regex
    assert rows("Paris") == set()  # not the body: that is ~b
    assert rows("weather|deploy") == {"get_weather", "deploy"}  # | ends a word
    assert rows("tools/ !call") == {"tools/list"}
    assert rows("x!y") == set()  # ! inside a word is a letter


def test_arguments_keep_or_and_balanced_parentheses(rows: Rows) -> None:
    assert rows("~s error|unanswered") == {"summarise", "notes.txt"}
    assert rows("(~m tools/(call|list)$)") == {"get_weather", "tools/list", "deploy", "slow_tool"}
    assert rows("(~n deploy)|(~n ask)") == {"deploy", "ask"}


def test_python_in_the_text_is_only_data(rows: Rows) -> None:
    assert rows("~m \"__import__('os')\"") == set()
    assert rows("'); import os; ('") == set()


@pytest.mark.parametrize(
    ("text", "column", "message"),
    [
        ("~x", 1, "unknown operator ~x at column 1; known: ~a ~b ~c ~d ~e ~id ~k ~m ~mark"),
        ("~m a ~zz b", 6, "unknown operator ~zz at column 6; known:"),
        ("~", 1, "~ without an operator at column 1"),
        ("~m tools/call & (~v | ~p", 25, "missing ) at column 25 (to close the ( at column 17)"),
        ("(~p", 4, "missing ) at column 4"),
        ("~p)", 3, "unexpected ) (no ( to close) at column 3"),
        ("()", 2, "expected a filter after (, found ) at column 2"),
        ("~p &", 5, "expected a filter after & at column 5"),
        ("~p | | ~v", 6, "expected a filter after |, found | at column 6"),
        ("& ~p", 1, "expected a filter, found & at column 1"),
        ("~p !", 5, "expected a filter after ! at column 5"),
        ("~m", 3, "~m wants REGEX at column 3 (e.g. ~m tools/call)"),
        ("~m )", 4, "~m wants REGEX at column 4"),
        ("~s ~p", 4, "~s wants STATUS[|STATUS...] at column 4"),
        ("~t", 3, "~t wants >TIME|<TIME at column 3"),
        ('~b "abc', 4, 'unclosed quote " at column 4'),
        ("weather 'x\\'", 9, "unclosed quote ' at column 9"),
        ('""', 1, "empty word: use ~a for every flow at column 1"),
        ("~m (", 4, "bad regex '(' for ~m at column 4: missing ), unterminated subpattern"),
        ("~t x", 4, "~t wants a comparison like >100ms, <5ms or >1.5s at column 4; got 'x'"),
    ],
)
def test_errors_say_what_and_where(text: str, column: int, message: str) -> None:
    with pytest.raises(FilterError) as caught:
        compile_filter(text)
    assert caught.value.column == column
    assert str(caught.value).startswith(message)


def test_nesting_is_bounded() -> None:
    deep = "(" * MAX_DEPTH + "~p" + ")" * MAX_DEPTH
    assert str(compile_filter(deep)) == "~p"
    with pytest.raises(FilterError, match="nested deeper"):
        compile_filter("(" * (MAX_DEPTH + 1) + "~p" + ")" * (MAX_DEPTH + 1))
    nots = "!(" * MAX_DEPTH + "~p" + ")" * MAX_DEPTH
    assert str(compile_filter(nots)).count("!") == MAX_DEPTH
    long = " | ".join(f"~n n{i} & ~m m{i}" for i in range(2000))
    assert compile_filter(long)  # long flat chains are fine


ALPHABET = st.sampled_from(
    [
        *"~!&|()'\"\\ \t.*+?[]{}^$<>=|-_/01aemnpstvbdirc",
        *("~id ", "~mark", "~t >", "ms", "error", "é", "\x00"),
    ]
)


@settings(max_examples=400, deadline=None)
@given(st.one_of(st.text(), st.lists(ALPHABET, max_size=30).map("".join)))
def test_any_text_compiles_or_says_why(text: str) -> None:
    session = SESSION
    try:
        flt = compile_filter(text)
    except FilterError as exc:
        assert 1 <= exc.column <= len(text) + 1
        return
    assert isinstance(flt, Filter)
    matched = [row for row, item in enumerate(session.items) if flt(item)]
    assert list(filter_rows(flt, session.items)) == matched
    again = compile_filter(str(flt))  # the canonical text means the same
    assert [row for row, item in enumerate(session.items) if again(item)] == matched


SESSION = build_session()


def test_filter_rows_from_a_start_and_on_a_growing_list(session: SessionModel) -> None:
    flt = compile_filter("~s complete")
    every = list(filter_rows(flt, session.items))
    assert [label(session.items[r]) for r in every] == [
        "get_weather",
        "tools/list",
        "sampling/createMessage",
        "deploy",
    ]
    assert list(filter_rows(flt, session.items, start=3)) == [r for r in every if r >= 3]
    assert list(filter_rows(flt, session.items, start=1000)) == []
    assert list(filter_rows(compile_filter(""), session.items, start=8)) == [8, 9]
    grown = list(session.items)
    grown.extend(session.items[:2])
    added = filter_rows(flt, grown, start=len(session.items))  # only the new rows
    assert list(added) == [len(session.items) + 1]
    assert filter_rows(flt, []).tolist() == []
