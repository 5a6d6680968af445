"""Splicing one member of a JSON text, every other byte kept."""

from __future__ import annotations

from mcpeek.inspector.replay.rawjson import member_bytes, replace_member


def test_top_level_id_is_replaced_and_the_rest_kept() -> None:
    data = b'{ "jsonrpc":"2.0" ,"id" : 7, "result":{"id":1,"s":"a\\"}{"}}'
    assert member_bytes(data, ("id",)) == b"7"
    assert replace_member(data, ("id",), b'"x"') == (
        b'{ "jsonrpc":"2.0" ,"id" : "x", "result":{"id":1,"s":"a\\"}{"}}'
    )


def test_nested_paths_and_absent_members() -> None:
    data = b'{"params":{"progressToken":"t1","_meta":{"a/b":[1,{"x":2}]}}}'
    assert member_bytes(data, ("params", "progressToken")) == b'"t1"'
    assert member_bytes(data, ("params", "_meta", "a/b")) == b'[1,{"x":2}]'
    assert member_bytes(data, ("params", "missing")) is None
    assert member_bytes(data, ("params", "progressToken", "deeper")) is None
    assert replace_member(data, ("nope",), b"1") is None


def test_escaped_keys_duplicates_and_broken_text() -> None:
    assert member_bytes(b'{"\\u0069d":5}', ("id",)) == b"5"
    assert member_bytes(b'{"id":1,"id":2}', ("id",)) == b"2"  # the last wins, as decoders do
    assert member_bytes(b'{"id":', ("id",)) is None
    assert member_bytes(b"[1,2]", ("id",)) is None
    assert member_bytes(b'{"a":"unterminated', ("a",)) is None
