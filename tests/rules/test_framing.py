"""The stdio framing family: one valid JSON-RPC message per line, and who may send what."""

from __future__ import annotations

from mcpeek.inspector.testing.records import RecordBuilder
from mcpeek.rules.families.framing import RUN_LINES_LIMIT
from tests.rules.test_envelope import (
    family,
    found,
    initialize,
    legacy_conversation,
    modern_conversation,
    shown,
)


def test_conformant_conversations_have_clean_framing() -> None:
    for b in (modern_conversation(), legacy_conversation()):
        assert family(b.records) == [], shown(family(b.records))


# -- stdio.not-json ---------------------------------------------------------------------
def test_not_json_line() -> None:
    b = RecordBuilder()
    initialize(b)
    log = b.raw("Server listening on port 8080", "s2c")
    b.request("ping", id=1)
    b.result(1)
    (v,) = found(b.records, "stdio.not-json")
    assert (
        v.msgs == [log.seq]
        and v.message == "stdout line is not JSON: `Server listening on port 8080`"
    )
    assert v.excerpt == "Server listening on port 8080"  # reported at once, on its own line


def test_not_json_truncated_object_is_reported_when_the_run_breaks() -> None:
    b = RecordBuilder()
    initialize(b)
    cut = b.raw('{"jsonrpc":"2.0","id":1,"result":{"content":[', "s2c")
    b.request("ping", id=2, dir="c2s")  # the other direction does not break the run
    b.result(2)  # a valid message in the same direction does
    (v,) = found(b.records, "stdio.not-json")
    assert v.msgs == [cut.seq] and "stdout line is not JSON" in v.message
    assert found(b.records, "stdio.embedded-newline") == []


def test_not_json_held_line_is_reported_at_the_end() -> None:
    b = RecordBuilder()
    initialize(b)
    cut = b.raw("[1, 2,", "c2s")
    (v,) = found(b.records, "stdio.not-json")
    assert v.msgs == [cut.seq] and "stdin line" in v.message


def test_not_json_is_not_reported_for_the_other_problems() -> None:
    b = RecordBuilder()
    initialize(b)
    b.raw("", "s2c")  # blank
    b.raw("   \t", "c2s")  # blank
    b.raw(b'{"jsonrpc":"2.0","method":"x","params":{"t":"\xff"}}', "s2c")  # not UTF-8
    b.raw("42", "s2c")  # JSON, not an object
    b.raw('{"jsonrpc":"2.0","id":3}', "s2c")  # JSON, no shape
    assert found(b.records, "stdio.not-json") == []


def test_not_json_only_on_stdio() -> None:
    b = RecordBuilder("http")
    b.raw("not json at all", "s2c", ch="x1")
    b.raw("{", "s2c", ch="x1")
    assert [v for v in family(b.records) if v.rule.startswith("stdio.")] == []


# -- stdio.embedded-newline ---------------------------------------------------------------
def test_embedded_newline_two_lines() -> None:
    b = RecordBuilder()
    initialize(b)
    head = b.raw('{"jsonrpc":"2.0","id":1,', "c2s")
    tail = b.raw('"method":"ping"}', "c2s")
    violations = family(b.records)
    assert [(v.rule, v.msgs) for v in violations] == [
        ("stdio.embedded-newline", [head.seq, tail.seq])
    ]
    assert "split over 2 stdin lines" in violations[0].message


def test_embedded_newline_pretty_printed_with_traffic_in_between() -> None:
    b = RecordBuilder()
    initialize(b)
    b.request("tools/call", {"name": "t"}, id=1)
    lines = [
        "{",
        '  "jsonrpc": "2.0",',
        '  "id": 1,',
        '  "result": {',
        '    "content": [',
        '      {"type": "text", "text": "a',  # a raw newline inside a string, too
        'b"},',
        "      1",  # a scalar alone on its line is valid JSON by itself
        "    ],",
        "",  # a blank line inside: stdio.blank-line's, it does not break the run
        '    "isError": false',
        "  }",
        "}",
    ]
    seqs = []
    for i, line in enumerate(lines):
        if i == 3:
            b.notify("notifications/cancelled", {"requestId": 9}, dir="c2s")  # other side
        seqs.append(b.raw(line, "s2c").seq)
    (v,) = found(b.records, "stdio.embedded-newline")
    assert v.msgs == [s for s, line in zip(seqs, lines, strict=True) if line]
    assert "split over 12 stdout lines" in v.message and "starting `{`" in v.message
    assert found(b.records, "stdio.not-json") == []
    (blank,) = found(b.records, "stdio.blank-line")
    assert blank.msgs == [seqs[9]]


def test_embedded_newline_after_a_garbage_line() -> None:
    b = RecordBuilder()
    initialize(b)
    garbage = b.raw("DEBUG starting", "s2c")
    head = b.raw('{"jsonrpc":"2.0","method":"notifications/message",', "s2c")
    tail = b.raw('"params":{"level":"info","data":"x"}}', "s2c")
    violations = family(b.records)
    assert [(v.rule, v.msgs) for v in violations] == [
        ("stdio.not-json", [garbage.seq]),
        ("stdio.embedded-newline", [head.seq, tail.seq]),
    ]


def test_lines_that_close_but_do_not_join_are_not_json() -> None:
    b = RecordBuilder()
    initialize(b)
    one = b.raw('{"jsonrpc":"2.0",', "s2c")
    two = b.raw('"id" 1}', "s2c")  # closes the brace, but the join is not JSON
    three = b.raw("}", "s2c")  # closes nothing: not JSON on its own
    violations = family(b.records)
    assert [(v.rule, v.msgs) for v in violations] == [
        ("stdio.not-json", [one.seq]),
        ("stdio.not-json", [two.seq]),
        ("stdio.not-json", [three.seq]),
    ]


def test_a_run_is_bounded() -> None:
    b = RecordBuilder()
    initialize(b)
    b.raw("[", "s2c")
    for _ in range(RUN_LINES_LIMIT + 5):
        b.raw("1,", "s2c")
    b.raw("1]", "s2c")
    violations = found(b.records, "stdio.not-json")
    assert len(violations) == RUN_LINES_LIMIT + 7
    assert found(b.records, "stdio.embedded-newline") == []


# -- stdio.not-utf8 / stdio.blank-line ------------------------------------------------------
def test_not_utf8() -> None:
    b = RecordBuilder()
    initialize(b)
    bad = b.raw(b'{"jsonrpc":"2.0","method":"notifications/message","params":{"d":"\xc3("}}', "s2c")
    latin = b.raw(b"caf\xe9", "c2s")
    violations = family(b.records)
    assert [(v.rule, v.msgs) for v in violations] == [
        ("stdio.not-utf8", [bad.seq]),
        ("stdio.not-utf8", [latin.seq]),
    ]
    assert "stdout line is not valid UTF-8" in violations[0].message
    assert "stdin line" in violations[1].message


def test_blank_lines() -> None:
    b = RecordBuilder()
    initialize(b)
    empty = b.raw("", "s2c")
    spaces = b.raw("  \r", "c2s")
    violations = family(b.records)
    assert [(v.rule, v.msgs) for v in violations] == [
        ("stdio.blank-line", [empty.seq]),
        ("stdio.blank-line", [spaces.seq]),
    ]
    assert violations[0].message == "an empty line on stdout (not an MCP message)"
    assert "whitespace-only line on stdin" in violations[1].message


def test_a_message_with_trailing_carriage_return_is_fine() -> None:
    b = RecordBuilder()
    initialize(b)
    b.raw('{"jsonrpc":"2.0","id":1,"method":"ping"}\r')
    b.raw('{"jsonrpc":"2.0","id":1,"result":{}}\r', "s2c")
    assert family(b.records) == [], shown(family(b.records))


# -- stdio.server-request / stdio.client-response ---------------------------------------------
def test_modern_server_request() -> None:
    b = RecordBuilder(modern=True)
    b.request("tools/call", {"name": "t"}, id=1)
    ask = b.request("sampling/createMessage", {"messages": []}, id="s1", dir="s2c")
    answer = b.result("s1", {"role": "assistant"}, dir="c2s")
    b.result(1, {"content": []})
    (request,) = found(b.records, "stdio.server-request")
    assert request.msgs == [ask.seq] and "sampling/createMessage request" in request.message
    (response,) = found(b.records, "stdio.client-response")
    assert response.msgs == [ask.seq, answer.seq]
    assert "a result to sampling/createMessage" in response.message


def test_modern_client_response_to_nothing() -> None:
    b = RecordBuilder(modern=True)
    b.request("tools/list", id=1)
    b.result(1, {"tools": []})
    stray = b.error(42, -32601, "no", dir="c2s")
    violations = family(b.records)
    assert [(v.rule, v.msgs) for v in violations] == [("stdio.client-response", [stray.seq])]
    assert "the client sent an error (id 42)" in violations[0].message


def test_legacy_server_requests_and_client_responses_are_fine() -> None:
    b = legacy_conversation()
    assert found(b.records, "stdio.server-request") == []
    assert found(b.records, "stdio.client-response") == []


def test_modern_server_notifications_are_not_requests() -> None:
    b = RecordBuilder(modern=True)
    b.request("tools/call", {"name": "t"}, id=1, meta={"progressToken": 1})
    b.notify("notifications/progress", {"progressToken": 1, "progress": 1})
    b.request("notifications/message", {"level": "info", "data": "x"}, id=9, dir="s2c")
    b.result(1, {"content": []})
    assert found(b.records, "stdio.server-request") == []
    assert len(found(b.records, "notification.with-id")) == 1


def test_server_request_rules_only_on_stdio() -> None:
    b = RecordBuilder("http", modern=True)
    b.request("sampling/createMessage", {"messages": []}, id="s1", dir="s2c", ch="x1")
    assert found(b.records, "stdio.server-request") == []
