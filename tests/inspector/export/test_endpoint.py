"""Where ``--endpoint`` and ``--otlp`` send each signal."""

from __future__ import annotations

import pytest

from mcpeek.inspector.export.endpoint import BadEndpoint, parse_endpoint


@pytest.mark.parametrize(
    ("url", "traces", "metrics"),
    [
        (
            "http://127.0.0.1:4318",
            "http://127.0.0.1:4318/v1/traces",
            "http://127.0.0.1:4318/v1/metrics",
        ),
        ("http://h:4318/", "http://h:4318/v1/traces", "http://h:4318/v1/metrics"),
        ("https://h/otel", "https://h/otel/v1/traces", "https://h/otel/v1/metrics"),
        ("http://h:4318/v1/traces", "http://h:4318/v1/traces", "http://h:4318/v1/metrics"),
        ("grpc://h:4317", "h:4317", "h:4317"),
    ],
)
def test_signal_urls(url: str, traces: str, metrics: str) -> None:
    endpoint = parse_endpoint(url)
    assert endpoint.signal_url("traces") == traces
    assert endpoint.signal_url("metrics") == metrics


def test_protocols() -> None:
    assert parse_endpoint("https://h").protocol == "http/protobuf"
    assert parse_endpoint("https://h").secure
    assert parse_endpoint("grpc://h:1").protocol == "grpc"
    assert not parse_endpoint("grpc://h:1").secure
    assert parse_endpoint("grpcs://h:1").secure


@pytest.mark.parametrize("url", ["h:4318", "ftp://h", "http://", "http://h:notaport", ""])
def test_bad_urls(url: str) -> None:
    with pytest.raises(BadEndpoint) as caught:
        parse_endpoint(url)
    assert "\n" not in str(caught.value) and url in str(caught.value)
