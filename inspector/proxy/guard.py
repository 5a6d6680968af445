"""Who may talk to the HTTP proxy: loopback listeners and DNS-rebinding protection.

The proxy protects its own listener the way the spec asks MCP servers to:
a request whose ``Host`` is not the listener's own loopback name/address, or
whose ``Origin`` is present and not a loopback origin, is refused with 403
(unless ``--allow-remote`` / ``--allow-origin`` say otherwise). Without this,
rewriting ``Host`` for the upstream would silently defeat the upstream's
own protection against a web page in the user's browser.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from urllib.parse import urlsplit

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
_PASSED_REMEMBERED = 64


def is_loopback_host(host: str) -> bool:
    host = host.strip("[]").lower()
    if host in LOOPBACK_NAMES or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def parse_listen(value: str) -> tuple[str, int]:
    """``HOST:PORT``, ``:PORT`` or ``PORT`` (host defaults to 127.0.0.1); ``[::1]:PORT``."""
    host, sep, port = value.rpartition(":")
    if not sep:
        host, port = "", value
    if host.startswith("[") != host.endswith("]"):  # "[::1:80": no HOST:PORT
        port = ""
    host = host.strip("[]") or "127.0.0.1"
    # ASCII digits only: str.isdigit() also takes "²", which int() refuses.
    if not (port.isascii() and port.isdigit()) or not 0 <= int(port) <= 65535:
        raise ValueError(f"--listen {value!r}: expected HOST:PORT with a port from 0 to 65535")
    return host, int(port)


class RequestGuard:
    def __init__(
        self, port: int, *, allow_remote: bool = False, allowed_origins: Iterable[str] = ()
    ) -> None:
        self.port = port
        self.allow_remote = allow_remote
        self.allowed_origins = {o.rstrip("/").lower() for o in allowed_origins}
        # The (Host, Origin, port) of requests that passed: a client sends the same
        # in every request (bounded, should one send ever new ones).
        self._passed: set[tuple[str | None, str | None, int]] = set()

    def refusal(self, host: str | None, origin: str | None) -> str | None:
        """Why a request must be refused (403), or ``None`` when it may pass."""
        key = (host, origin, self.port)  # (the port is set once the listener has one)
        if key in self._passed:
            return None
        refusal = self._refusal(host, origin)
        if refusal is None:
            if len(self._passed) >= _PASSED_REMEMBERED:
                self._passed.clear()
            self._passed.add(key)
        return refusal

    def _refusal(self, host: str | None, origin: str | None) -> str | None:
        if not self.allow_remote:
            split = _split_host(host or "")
            if split is None:
                return f"Host {host!r} is not a host name with an optional port"
            name, port = split
            if not is_loopback_host(name) or (port is not None and port != self.port):
                return f"Host {host!r} is not this proxy's loopback address"
        if origin is not None and origin.lower() not in self.allowed_origins:
            if origin == "null":
                return "Origin 'null' is not allowed"
            parts = urlsplit(origin)
            if parts.scheme not in ("http", "https") or not is_loopback_host(parts.hostname or ""):
                return f"Origin {origin!r} is not a loopback origin (see --allow-origin)"
        return None


def _split_host(host: str) -> tuple[str, int | None] | None:
    """``(name, port)`` of a Host value, or ``None`` when it is malformed (a port
    that is not a number, an unclosed ``[``, anything after the port)."""
    if host.startswith("["):
        name, bracket, rest = host[1:].partition("]")
        if not bracket or (rest and not rest.startswith(":")):
            return None
        port = rest[1:]
    else:
        name, _, port = host.partition(":")
    if not port:  # "host:" too: RFC 3986 allows an empty port
        return name, None
    return (name, int(port)) if port.isascii() and port.isdigit() else None
