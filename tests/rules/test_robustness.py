"""Lint never crashes: arbitrary bytes and arbitrary JSON in ``raw`` reach every rule.

A rule that raises is caught by the engine and reported as
``inspector.rule-crashed``; this test makes sure none does, on stdio and on
HTTP traffic, in either direction.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpeek.inspector.testing.records import RecordBuilder
from mcpeek.rules.engine import RULE_CRASHED
from mcpeek.rules.testing import lint_records

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=10),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=6), children, max_size=3)
    ),
    max_leaves=10,
)
methods = st.sampled_from(
    [
        "initialize",
        "notifications/initialized",
        "server/discover",
        "tools/list",
        "tools/call",
        "prompts/get",
        "resources/read",
        "resources/list",
        "subscriptions/listen",
        "ping",
        "notifications/progress",
        "notifications/cancelled",
        "notifications/message",
        "sampling/createMessage",
        "elicitation/create",
        "roots/list",
        "completion/complete",
        "notifications/tools/list_changed",
        "logging/setLevel",
        "tasks/get",
        "x.y/custom",
    ]
)
messages = st.fixed_dictionaries(
    {"jsonrpc": st.just("2.0")},
    optional={
        "id": st.integers(0, 3) | st.sampled_from(["1", None]) | json_values,
        "method": methods | json_values,
        "params": st.fixed_dictionaries(
            {},
            optional={
                "name": st.sampled_from(["a", "b"]) | json_values,
                "_meta": st.dictionaries(
                    st.sampled_from(
                        [
                            "progressToken",
                            "io.modelcontextprotocol/protocolVersion",
                            "io.modelcontextprotocol/clientCapabilities",
                            "io.modelcontextprotocol/logLevel",
                            "io.modelcontextprotocol/subscriptionId",
                            "traceparent",
                            "bad key/",
                        ]
                    ),
                    json_values,
                    max_size=3,
                )
                | json_values,
                "progressToken": json_values,
                "requestId": json_values,
                "requestState": json_values,
                "inputResponses": json_values,
                "arguments": json_values,
                "protocolVersion": st.sampled_from(["2025-11-25", "2026-07-28", "2024-11-05"])
                | json_values,
                "capabilities": json_values,
                "notifications": json_values,
                "uri": json_values,
            },
        )
        | json_values,
        "result": st.fixed_dictionaries(
            {},
            optional={
                "resultType": st.sampled_from(["complete", "input_required"]) | json_values,
                "tools": st.lists(
                    st.fixed_dictionaries(
                        {"name": json_values},
                        optional={"outputSchema": json_values, "inputSchema": json_values},
                    ),
                    max_size=2,
                )
                | json_values,
                "structuredContent": json_values,
                "inputRequests": json_values,
                "requestState": json_values,
                "capabilities": json_values,
                "protocolVersion": json_values,
                "contents": json_values,
                "_meta": json_values,
                "ttlMs": json_values,
                "cacheScope": json_values,
            },
        )
        | json_values,
        "error": st.fixed_dictionaries(
            {},
            optional={
                "code": st.sampled_from([-32602, -32022, -32021, -32020, -32002]) | json_values,
                "message": json_values,
                "data": json_values,
            },
        )
        | json_values,
    },
)
lines = st.tuples(
    st.sampled_from(["c2s", "s2c"]),
    messages.map(lambda m: json.dumps(m).encode())
    | st.binary(max_size=40)
    | st.lists(messages, max_size=2).map(lambda b: json.dumps(b).encode()),
)


def crashes(found: list) -> list:  # type: ignore[type-arg]
    return [v.message for v in found if v.rule == RULE_CRASHED]


@pytest.mark.e2e  # hundreds of generated captures, each through every rule
@given(st.lists(lines, max_size=30))
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_no_rule_crashes_on_stdio(items: list[tuple[str, bytes]]) -> None:
    b = RecordBuilder()
    for direction, raw in items:
        b.raw(raw, direction)
        b.wait(5)
    assert crashes(lint_records(b.records)) == []


@pytest.mark.e2e
@given(st.lists(lines, max_size=12), st.sampled_from([None, "2026-07-28", "2025-11-25"]))
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_no_rule_crashes_on_http(items: list[tuple[str, bytes]], spec: str | None) -> None:
    b = RecordBuilder("http")
    for i, (direction, raw) in enumerate(items):
        x = f"x{i}"
        b.http(
            x,
            "request",
            method="POST",
            path="/mcp",
            headers=[("accept", "application/json"), ("mcp-session-id", "S")],
        )
        b.raw(raw, "c2s", ch=x)
        b.http(x, "response", status=200, headers=[("content-type", "text/event-stream")])
        if direction == "s2c":
            b.raw(raw, "s2c", ch=x)
        b.http(x, "end", reason="complete")
    assert crashes(lint_records(b.records, spec=spec)) == []


def nested(depth: int) -> str:
    return '{"a":' * depth + "1" + "}" * depth


@pytest.mark.parametrize("depth", [600, 950, 990, 5000])
def test_no_rule_crashes_on_messages_nested_deep(depth: int) -> None:
    """Around the interpreter's recursion limit, where decoding works in one place and
    not in another, no rule crashes: too deep to read is not JSON."""
    deep = nested(depth)
    b = RecordBuilder()
    b.raw(
        f'{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"t","arguments":{deep}}}}}'
    )
    b.raw(f'{{"jsonrpc":"2.0","id":1,"result":{{"content":[],"structuredContent":{deep}}}}}', "s2c")
    b.raw(f'{{"jsonrpc":"2.0","id":{deep},"method":"ping"}}')
    b.raw(
        f'{{"jsonrpc":"2.0","method":"notifications/progress","params":{{"progress":{deep}}}}}',
        "s2c",
    )
    b.raw(f'{{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{{"_meta":{deep}}}}}')
    b.raw(f'{{"jsonrpc":"2.0","id":2,"error":{{"code":1,"message":"m","data":{deep}}}}}', "s2c")
    b.raw("[" * depth + "]" * depth)
    b.raw(f"[{deep}]")
    assert crashes(lint_records(b.records)) == []
