"""The listener's Host/Origin guard (DNS rebinding), decided on the request head."""

from __future__ import annotations

import pytest

from mcpeek.inspector.proxy.guard import RequestGuard

PORT = 6280


@pytest.mark.parametrize(
    "host",
    ["127.0.0.1", f"127.0.0.1:{PORT}", "localhost", f"localhost:{PORT}", f"[::1]:{PORT}", "[::1]:"],
)
def test_this_proxys_loopback_names_pass(host: str) -> None:
    assert RequestGuard(PORT).refusal(host, None) is None


@pytest.mark.parametrize(
    "host",
    [
        "127.0.0.1:abc",  # a port that is not a number was taken for no port
        "localhost:1@x",
        "[::1",  # an unclosed bracket
        "[::1]x",
        f"127.0.0.1:{PORT}:1",
        "127.0.0.1:٣",  # a digit, but not an ASCII one
        "evil.example",
        "127.0.0.1:1",  # another port
    ],
)
def test_a_malformed_or_foreign_host_is_refused(host: str) -> None:
    assert RequestGuard(PORT).refusal(host, None) is not None


def test_what_passed_is_remembered_for_its_port_only() -> None:
    guard = RequestGuard(PORT)
    host = f"127.0.0.1:{PORT}"
    assert guard.refusal(host, None) is None
    assert guard.refusal(host, None) is None  # remembered
    guard.port = PORT + 1  # (as the listener sets it once bound)
    assert guard.refusal(host, None) is not None
    assert guard.refusal("evil.example", None) is not None
    assert guard.refusal("evil.example", None) is not None  # a refusal is not remembered


def test_the_hosts_remembered_are_bounded() -> None:
    guard = RequestGuard(PORT, allow_remote=True)
    for n in range(1000):
        assert guard.refusal(f"host{n}.example", None) is None
    assert len(guard._passed) <= 64
