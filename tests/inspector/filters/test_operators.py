"""Every ~x operator on a real analysed capture: what it keeps, and near misses."""

from __future__ import annotations

import pytest

from mcpeek.inspector.filters import FilterError, compile_filter, filter_rows
from mcpeek.inspector.testing.records import RecordBuilder
from mcpeek.inspector.views.session import SessionModel
from tests.inspector.filters.conftest import Rows

EVERY = {
    "latte",
    "get_weather",
    "tools/list",
    "summarise",
    "notes.txt",
    "sampling/createMessage",
    "deploy",
    "slow_tool",
    "ask",
    "orphan",
}

# every flow with a latency: answered, and the chain left at input_required
ANSWERED = {"get_weather", "tools/list", "summarise", "sampling/createMessage", "deploy", "ask"}


def test_the_sample_has_the_rows_the_tests_name(rows: Rows) -> None:
    assert rows("") == EVERY
    assert rows("~a") == EVERY


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("~m tools/call", {"get_weather", "deploy", "slow_tool"}),
        ("~m ^tools/", {"get_weather", "deploy", "slow_tool", "tools/list"}),
        ("~m TOOLS/LIST", {"tools/list"}),  # regexes ignore case
        ("~m tools/(call|list)$", {"get_weather", "deploy", "slow_tool", "tools/list"}),
        ("~m ^call", set()),  # searched, but anchors hold
        ("~m .", EVERY - {"orphan"}),  # an orphan has no method: never matches
    ],
)
def test_method(rows: Rows, text: str, expected: set[str]) -> None:
    assert rows(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("~n get_weather", {"get_weather"}),
        ("~n weather", {"get_weather"}),
        ("~n ^weather", set()),
        ("~n notes\\.txt$", {"notes.txt"}),  # a resource's name is its URI
        ("~n .", {"get_weather", "summarise", "notes.txt", "deploy", "slow_tool", "ask"}),
    ],
)
def test_name(rows: Rows, text: str, expected: set[str]) -> None:
    assert rows(text) == expected


def test_violations_by_severity(rows: Rows) -> None:
    assert rows("~v") == {"get_weather", "tools/list", "summarise"}
    assert rows("~v info") == {"get_weather", "tools/list", "summarise"}
    assert rows("~v warning") == {"get_weather", "summarise"}
    assert rows("~v error") == {"summarise"}
    assert rows("~v ERROR") == {"summarise"}
    assert rows("!~v") == EVERY - {"get_weather", "tools/list", "summarise"}


def test_violation_severity_is_optional_and_only_a_severity_is_taken(rows: Rows) -> None:
    # "weather" after ~v is a quick search, not ~v's argument
    assert str(compile_filter("~v weather")) == "~v & weather"
    assert rows("~v weather") == {"get_weather"}
    assert rows("~v (error)") == {"get_weather", "tools/list", "summarise"} & rows("error")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("~r result.result-type-missing", {"get_weather"}),
        ("~r ^meta\\.", {"tools/list"}),
        ("~r code", {"summarise"}),
        ("~r result-type-present", set()),
    ],
)
def test_rule(rows: Rows, text: str, expected: set[str]) -> None:
    assert rows(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("~s error", {"summarise"}),
        ("~s ok", {"get_weather", "tools/list", "sampling/createMessage", "deploy"}),
        ("~s complete", {"get_weather", "tools/list", "sampling/createMessage", "deploy"}),
        ("~s error|input_required|unanswered", {"summarise", "ask", "notes.txt"}),
        ("~s CANCELLED", {"slow_tool"}),
        ("~s orphan|notification", {"orphan", "latte"}),
        ("~s pending|closed", set()),
    ],
)
def test_status(rows: Rows, text: str, expected: set[str]) -> None:
    assert rows(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("~t >100ms", {"get_weather"}),
        ("~t >0.1s", {"get_weather"}),
        ("~t >152.1ms", set()),
        ("~t >=2.5", {"get_weather", "deploy"}),  # ms by default
        ("~t <5ms", ANSWERED - {"get_weather"}),
        ("~t <=1.5s", ANSWERED),
        ("~t <1000000s", ANSWERED),
        ("~t < 5ms", None),  # no space inside the comparison: that is ~t < and a word
    ],
)
def test_latency(rows: Rows, text: str, expected: set[str] | None) -> None:
    # flows without a latency (unanswered, cancelled, notifications) never match
    if expected is None:
        with pytest.raises(FilterError, match="~t wants a comparison"):
            rows(text)
    else:
        assert rows(text) == expected


def test_latency_never_matches_without_one(rows: Rows) -> None:
    assert not rows("~t >0ms") & {"notes.txt", "slow_tool", "latte", "orphan"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("~b temperature", {"get_weather"}),  # in the response, any case
        ("~b 'temperature: 21'", {"get_weather"}),
        ("~b Paris", {"get_weather"}),  # in the request
        ('~b "\\"id\\":\\"abc\\""', {"summarise"}),  # punctuation only: exact bytes
        ("~b inputResponses", {"deploy"}),  # the retry's bytes belong to the chain
        ("~b 'temp\\w+: \\d+ c'", {"get_weather"}),  # a regex
        ("~b latte", {"latte"}),  # a message that is not UTF-8
        ("~b café", set()),  # its é is not UTF-8, so it is not there as é
        ("~b requestId", {"slow_tool"}),  # the cancellation
        ("~b -32602", {"summarise"}),
        ("~b temperatures", set()),
    ],
)
def test_body(rows: Rows, text: str, expected: set[str]) -> None:
    assert rows(text) == expected


def test_direction(rows: Rows) -> None:
    assert rows("~d s2c") == {"sampling/createMessage", "latte", "orphan"}
    assert rows("~d C2S") == EVERY - {"sampling/createMessage", "latte", "orphan"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("~id 1", {"get_weather"}),
        ("~id abc", {"summarise"}),
        ("~id 11", {"deploy"}),  # any id of the chain
        ("~id 10", {"deploy"}),
        ("~id 99", {"orphan"}),
        ("~id 1.0", {"get_weather"}),
        ("~id ab", set()),  # whole ids only
        ("~id 100", set()),
    ],
)
def test_id(rows: Rows, text: str, expected: set[str]) -> None:
    assert rows(text) == expected


def test_a_number_does_not_match_a_string_id() -> None:
    b = RecordBuilder()
    b.request("ping", id="7")
    b.result("7")
    model = SessionModel("x.jsonl")
    model.feed(b.records)
    model.finish()
    assert list(filter_rows(compile_filter("~id 7"), model.items)) == [0]  # "7" is 7's text
    b = RecordBuilder()
    b.request("ping", id=7)
    b.result(7)
    model = SessionModel("x.jsonl")
    model.feed(b.records)
    model.finish()
    assert list(filter_rows(compile_filter("~id '7'"), model.items)) == [0]
    assert list(filter_rows(compile_filter("~id 07x"), model.items)) == []


def test_mark_comment_progress(rows: Rows) -> None:
    assert rows("~mark") == {"sampling/createMessage"}
    assert rows("~c flaky") == {"get_weather"}  # any case
    assert rows("~c ^Mondays") == set()
    assert rows("~c .") == {"get_weather"}  # no comment: never matches
    assert rows("~p") == {"get_weather"}


def test_era(rows: Rows) -> None:
    assert rows("~e modern") >= {"get_weather", "deploy", "summarise"}
    assert rows("~e legacy") == set()
    b = RecordBuilder()
    b.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}}, id=1)
    b.result(1, {"protocolVersion": "2025-11-25", "capabilities": {}})
    b.request("tools/call", {"name": "old"}, id=2)
    b.result(2, {"content": []})
    model = SessionModel("legacy.jsonl")
    model.feed(b.records)
    model.finish()
    assert list(filter_rows(compile_filter("~e legacy & ~n old"), model.items)) == [1]
    assert list(filter_rows(compile_filter("~e modern"), model.items)) == []


@pytest.mark.parametrize(
    ("text", "column", "reason"),
    [
        ("~s bogus", 4, "unknown status 'bogus' for ~s"),
        ("~s error|", 4, "unknown status '' for ~s"),
        ("~t 100ms", 4, "~t wants a comparison like >100ms, <5ms or >1.5s"),
        ("~t >fast", 4, "~t wants a comparison like >100ms, <5ms or >1.5s"),
        ("~t >1e400s", 4, "~t wants a comparison like >100ms, <5ms or >1.5s"),
        ("~d up", 4, "~d wants c2s or s2c"),
        ("~e future", 4, "~e wants modern or legacy"),
        ("~m [", 4, "bad regex '[' for ~m"),
        ("~n (a", 4, "bad regex '(a' for ~n"),
        ("~r *", 4, "bad regex '*' for ~r"),
        ("~b 'x{2,1}'", 4, "bad regex 'x{2,1}' for ~b"),
        ("~c +", 4, "bad regex '+' for ~c"),
        ("~m x  ~n ??", 10, "bad regex '??' for ~n"),
    ],
)
def test_bad_arguments_say_where(text: str, column: int, reason: str) -> None:
    with pytest.raises(FilterError) as caught:
        compile_filter(text)
    assert caught.value.column == column
    assert caught.value.reason == reason
    assert str(caught.value).startswith(f"{reason} at column {column}")
