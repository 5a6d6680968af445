"""The names and values of the MCP conventions, as mcpeek writes them."""

from __future__ import annotations

import pytest

from mcpeek.inspector.export import semconv as sc


def test_request_ids_as_strings() -> None:
    ids = ["a", 3, 1.5, None, True, 2**70]
    assert [sc.request_id(v) for v in ids] == ["a", "3", "1.5", "null", "true", str(2**70)]


@pytest.mark.parametrize(
    ("method", "target", "name"),
    [
        ("tools/call", "get_weather", "tools/call get_weather"),
        ("prompts/get", "greet", "prompts/get greet"),
        ("resources/read", "file:///etc/x", "resources/read"),  # no URI in a span name
        ("tools/list", None, "tools/list"),
        (None, None, "(no method)"),
    ],
)
def test_span_names(method: str | None, target: str | None, name: str) -> None:
    assert sc.span_name(method, target) == name


@pytest.mark.parametrize(
    ("value", "parsed"),
    [
        (
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            (0x4BF92F3577B34DA6A3CE929D0E0E4736, 0x00F067AA0BA902B7),
        ),
        ("00-00000000000000000000000000000000-00f067aa0ba902b7-01", None),  # zero trace id
        ("00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", None),  # zero span id
        ("ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", None),  # version ff
        ("00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", None),  # upper case
        ("garbage", None),
        (7, None),
    ],
)
def test_traceparent(value: object, parsed: tuple[int, int] | None) -> None:
    assert sc.parse_traceparent(value) == parsed
