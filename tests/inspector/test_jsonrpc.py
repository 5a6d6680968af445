"""The envelope decoder: classification, and never raising on any input."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpeek.inspector.jsonrpc import NO_ID, Message, MessageDecoder

decoder = MessageDecoder()


@pytest.mark.parametrize(
    ("raw", "kind", "msg_id", "method"),
    [
        ('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}', "request", 1, "tools/call"),
        ('{"jsonrpc":"2.0","id":"1","method":"ping"}', "request", "1", "ping"),
        (
            '{"jsonrpc":"2.0","method":"notifications/progress"}',
            "notification",
            NO_ID,
            "notifications/progress",
        ),
        ('{"jsonrpc":"2.0","id":3,"result":{"resultType":"complete"}}', "result", 3, None),
        ('{"jsonrpc":"2.0","id":3,"result":null}', "result", 3, None),
        ('{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}', "error", None, None),
        ('  {"id":4,"method":"x"}  ', "request", 4, "x"),
        ('{"jsonrpc":"2.0","id":1.5,"method":"ping"}', "request", 1.5, "ping"),
    ],
)
def test_classifies(raw: str, kind: str, msg_id: object, method: str | None) -> None:
    message = decoder.decode(raw.encode())
    assert message.kind == kind
    assert message.id == msg_id if msg_id is not NO_ID else not message.has_id
    assert message.method == method


def test_integer_and_string_ids_stay_distinct() -> None:
    a = decoder.decode(b'{"jsonrpc":"2.0","id":1,"method":"ping"}')
    b = decoder.decode(b'{"jsonrpc":"2.0","id":"1","method":"ping"}')
    assert a.id == 1 and b.id == "1" and a.id != b.id


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        (b"", "not-json"),
        (b"   ", "not-json"),
        (b"{not json", "not-json"),
        (b'{"a":1} trailing', "not-json"),
        (b"\xff\xfe", "not-utf8"),
        (b"42", "not-object"),
        (b'"text"', "not-object"),
        (b'{"jsonrpc":"2.0","id":1}', "shape"),
        (b'{"jsonrpc":"2.0","id":1,"result":{},"error":{}}', "shape"),
        (b'{"jsonrpc":"2.0","id":1,"method":3}', "shape"),
        (b'{"jsonrpc":"2.0","id":1,"method":"x","result":{}}', "shape"),
    ],
)
def test_invalid_inputs_say_why(raw: bytes, problem: str) -> None:
    message = decoder.decode(raw)
    assert message.kind == "invalid"
    assert message.problem == problem
    assert message.detail


def test_batch_members_are_classified() -> None:
    message = decoder.decode(
        b'[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","method":"b"}, 5]'
    )
    assert message.kind == "batch"
    assert [m.kind for m in message.items] == ["request", "notification", "invalid"]


def test_payloads_are_lazy_and_exact() -> None:
    raw = b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x", "n": 1.50}}'
    message = decoder.decode(raw)
    assert bytes(message.params) == b'{"name":"x", "n": 1.50}'  # the wire's own bytes
    assert message.params_value() == {"name": "x", "n": 1.5}
    assert message.result is None and message.result_value() is None


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)
envelope_like = st.fixed_dictionaries(
    {},
    optional={
        "jsonrpc": st.sampled_from(["2.0", "1.0", 2]) | json_values,
        "id": st.integers() | st.text(max_size=5) | json_values,
        "method": st.sampled_from(["ping", "tools/call", "notifications/x"]) | json_values,
        "params": json_values,
        "result": json_values,
        "error": json_values,
    },
)


@given(st.binary(max_size=300))
@settings(max_examples=500)
def test_never_raises_on_bytes(data: bytes) -> None:
    assert isinstance(decoder.decode(data), Message)


@given(envelope_like | json_values)
@settings(max_examples=500)
def test_never_raises_on_json_and_agrees_with_json_module(value: object) -> None:
    raw = json.dumps(value).encode()
    message = decoder.decode(raw)
    if not isinstance(value, dict | list):
        assert message.kind == "invalid" and message.problem == "not-object"
        return
    if isinstance(value, list):
        assert message.kind == "batch" and len(message.items) == len(value)
        return
    if (
        "method" in value
        and isinstance(value["method"], str)
        and not ("result" in value or "error" in value)
    ):
        assert message.kind == ("request" if "id" in value else "notification")
        assert message.method == value["method"]
        assert message.params_value() == value.get("params")
    elif "method" not in value and ("result" in value) != ("error" in value):
        assert message.kind == ("result" if "result" in value else "error")
    else:
        assert message.kind == "invalid" and message.problem == "shape"
    if "id" in value:
        assert message.id == value["id"]


@pytest.mark.parametrize(
    "raw",
    [
        "[" * 5000 + "]" * 5000,
        '{"a":' * 5000 + "1" + "}" * 5000,
        '{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":' + "[" * 5000 + "]" * 5000 + "}}",
        "[" + '{"a":' * 5000 + "1" + "}" * 5000 + "]",
        '"' + "x" * 10 + '"' + " " + "[" * 5000,  # not JSON either way
    ],
    ids=["list", "object", "params", "batch-member", "truncated"],
)
def test_json_nested_too_deep_is_not_json(raw: str) -> None:
    message = decoder.decode(raw.encode())
    assert message.kind == "invalid"
    assert message.problem == "not-json"


def test_too_deep_says_so() -> None:
    assert decoder.decode(b"[" * 5000 + b"]" * 5000).detail == "JSON nested too deeply to read"


def test_deeper_than_walks_without_recursion() -> None:
    from mcpeek.inspector.jsonrpc import deeper_than

    value = json.loads("[" * 900 + "]" * 900)
    assert deeper_than(value, 899)
    assert not deeper_than(value, 900)
    assert not deeper_than({"a": [1, {"b": 2}]}, 3)
    assert deeper_than({"a": [1, {"b": 2}]}, 2)
    assert not deeper_than(7, 0)
