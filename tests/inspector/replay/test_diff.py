"""The pure comparison of a live response with the recorded one."""

from __future__ import annotations

from mcpeek.inspector.replay.canonical import parse_pointers
from mcpeek.inspector.replay.diff import (
    MISSING,
    OPAQUE_STATE,
    Difference,
    compare_responses,
    diff,
    is_timestamp,
    normalize,
)

SERVER_INFO = "io.modelcontextprotocol/serverInfo"


def response(id: object, result: object) -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": id, "result": result}


def test_equal_values_have_no_difference_whatever_the_key_order() -> None:
    assert diff({"a": 1, "b": [1, {"c": 2}]}, {"b": [1, {"c": 2}], "a": 1}) == []


def test_a_nested_scalar_change_is_named_by_its_json_pointer() -> None:
    recorded = response(5, {"content": [{"type": "text", "text": "Sunny in Paris"}]})
    live = response(9, {"content": [{"type": "text", "text": "Rainy in Paris"}]})
    assert compare_responses(recorded, live) == [
        Difference("/result/content/0/text", "Sunny in Paris", "Rainy in Paris")
    ]


def test_list_items_are_compared_by_index_and_extra_items_are_absent_on_one_side() -> None:
    found = diff({"tools": ["a", "b"]}, {"tools": ["a", "c", "d"]})
    assert found == [
        Difference("/tools/1", "b", "c"),
        Difference("/tools/2", MISSING, "d"),
    ]
    assert diff([1, 2, 3], [1]) == [Difference("/1", 2, MISSING), Difference("/2", 3, MISSING)]


def test_members_missing_on_either_side_and_type_changes() -> None:
    found = diff({"a": 1, "b": {"x": 1}}, {"b": [1], "c": None})
    assert found == [
        Difference("/a", 1, MISSING),
        Difference("/b", {"x": 1}, [1]),
        Difference("/c", MISSING, None),
    ]
    assert diff({"n": 1}, {"n": True}) == [Difference("/n", 1, True)]


def test_pointer_tokens_are_escaped() -> None:
    assert diff({"a/b": {"~c": 1}}, {"a/b": {"~c": 2}}) == [Difference("/a~1b/~0c", 1, 2)]


def test_the_id_never_counts() -> None:
    assert compare_responses(response(1, {}), response("live-7", {})) == []


def test_volatile_meta_and_timestamps_are_ignored_at_any_depth() -> None:
    recorded = response(
        1,
        {
            "content": [{"type": "text", "text": "x", "_meta": {"createdAt": "2026-01-01"}}],
            "_meta": {
                SERVER_INFO: {"name": "old", "version": "1"},
                "traceparent": "00-aaa-01",
                "io.example/timestamp": 1796000000.5,
                "io.example/sentAt": "2026-11-30T09:00:00Z",
                "io.example/tenant": "acme",
            },
        },
    )
    live = response(
        2,
        {
            "content": [{"type": "text", "text": "x", "_meta": {"createdAt": "2026-12-01"}}],
            "_meta": {
                SERVER_INFO: {"name": "new", "version": "2"},
                "io.example/timestamp": 1796999999.0,
                "io.example/sentAt": "2026-12-01T10:00:00Z",
                "io.example/tenant": "acme",
            },
        },
    )
    assert compare_responses(recorded, live) == []
    live["result"]["_meta"]["io.example/tenant"] = "other"  # type: ignore[index]
    assert compare_responses(recorded, live) == [
        Difference("/result/_meta/io.example~1tenant", "acme", "other")
    ]


def test_a_meta_left_empty_is_dropped() -> None:
    with_meta = response(1, {"a": 1, "_meta": {"progressToken": 3}})
    assert normalize(with_meta) == {"jsonrpc": "2.0", "result": {"a": 1}}


def test_timestamp_names() -> None:
    for key in ("timestamp", "createdAt", "io.x/startTime", "sent_at", "expiresAt", "date"):
        assert is_timestamp(key, 1), key
    for key in ("format", "status", "runtime", "ttlMs", "tenant"):
        assert not is_timestamp(key, 1), key
    assert is_timestamp("when", "2026-11-30T09:15:02Z")


def test_ignored_pointers_are_relative_to_the_response_message() -> None:
    recorded = response(1, {"content": [{"text": "a"}, {"text": "b"}], "n": 1})
    live = response(1, {"content": [{"text": "A"}, {"text": "b"}], "n": 2})
    ignore = parse_pointers(["/result/content/0/text"])
    assert compare_responses(recorded, live, ignore) == [Difference("/result/n", 1, 2)]
    everything = parse_pointers(["/result/content/0/text", "/result/n"])
    assert compare_responses(recorded, live, everything) == []


def test_an_opaque_request_state_counts_only_by_its_presence() -> None:
    recorded = response(1, {"resultType": "input_required", "requestState": "sealed-1"})
    live = response(2, {"resultType": "input_required", "requestState": "sealed-2"})
    assert compare_responses(recorded, live) == []
    gone = response(2, {"resultType": "input_required", "inputRequests": {}})
    assert compare_responses(recorded, gone) == [
        Difference("/result/requestState", OPAQUE_STATE, MISSING),
        Difference("/result/inputRequests", MISSING, {}),
    ]


def test_an_error_where_a_result_was_recorded() -> None:
    recorded = response(1, {"content": []})
    live = {"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "no such tool"}}
    assert [d.path for d in compare_responses(recorded, live, attempt=2)] == ["/result", "/error"]
    assert compare_responses(recorded, live, attempt=2)[0].attempt == 2


def test_difference_to_json_leaves_out_the_absent_side() -> None:
    assert Difference("/a", MISSING, 1).to_json() == {"path": "/a", "attempt": 1, "live": 1}


def test_an_ignored_list_item_missing_on_one_side_is_no_difference() -> None:
    # Regression: the item was turned into null on one side only, so it still differed
    # (and showed null where 3 was recorded).
    recorded = response(2, {"structuredContent": {"list": [1, 2, 3], "n": 1}})
    live = response(2, {"structuredContent": {"list": [1, 2], "n": 1}})
    ignore = parse_pointers(["/result/structuredContent/list/2"])
    assert compare_responses(recorded, live, ignore) == []
    assert compare_responses(live, recorded, ignore) == []
    assert compare_responses(recorded, live) == [
        Difference("/result/structuredContent/list/2", 3, MISSING)
    ]


def test_ignored_pointers_skip_whole_subtrees_and_match_escaped_keys() -> None:
    recorded = response(1, {"a/b": 1, "c~d": {"x": [1]}, "keep": 1})
    live = response(1, {"a/b": 2, "c~d": {"x": [2, 3]}, "keep": 2})
    ignore = parse_pointers(["/result/a~1b", "/result/c~0d"])
    assert compare_responses(recorded, live, ignore) == [Difference("/result/keep", 1, 2)]
    assert diff([1, [2, 3]], [1, [4]], ignore=parse_pointers(["/1"])) == []


def test_timestamps_outside_meta_are_compared() -> None:
    # What docs/replay.md promises: only _meta members that look like a timestamp are
    # ignored; one in a result is a difference unless --ignore names it.
    recorded = response(1, {"createdAt": "2026-11-30T09:00:00Z"})
    live = response(1, {"createdAt": "2026-12-01T10:00:00Z"})
    assert compare_responses(recorded, live) == [
        Difference("/result/createdAt", "2026-11-30T09:00:00Z", "2026-12-01T10:00:00Z")
    ]
    assert compare_responses(recorded, live, parse_pointers(["/result/createdAt"])) == []
