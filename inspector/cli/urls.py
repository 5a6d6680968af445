"""Checking the server URLs given on the command line (``replay --url``, ``http --upstream``)."""

from __future__ import annotations

from urllib.parse import urlsplit

from mcpeek.inspector.cli.base import UsageError
from mcpeek.inspector.proxy.guard import is_loopback_host

# Listening on these, a socket answers on every address of the machine.
ANY_ADDRESS = frozenset({"", "0.0.0.0", "::"})


def check_http_url(option: str, url: str) -> None:
    """``url`` must be an http(s) URL with a host (and a valid port, if any); else a
    :class:`UsageError` naming ``option`` (e.g. ``--url``)."""
    shown = without_password(url)
    try:
        parts = urlsplit(url)
        _ = parts.port  # raises on a port that is not a number in 0-65535
    except ValueError as exc:
        raise UsageError(f"{option} {shown!r} is not a valid URL: {exc}") from None
    if parts.scheme.lower() not in ("http", "https"):
        raise UsageError(f"{option} {shown!r}: expected an http:// or https:// URL")
    if not parts.hostname:
        raise UsageError(f"{option} {shown!r} names no host")


def is_own_address(url: str, host: str, port: int) -> bool:
    """Whether ``url`` reaches the proxy itself, listening on ``host`` and the
    ``port`` it bound: its upstream would be itself, and each request relayed would
    come back as a new one, without end. The same port and the listening host,
    or a loopback or any-address host when listening on loopback or on any."""
    parts = urlsplit(url)
    if (parts.port or (443 if parts.scheme.lower() == "https" else 80)) != port:
        return False
    target = (parts.hostname or "").lower()
    listening = host.strip("[]").lower()
    if target == listening:
        return True
    local = is_loopback_host(target) or target in ANY_ADDRESS
    return local and (is_loopback_host(listening) or listening in ANY_ADDRESS)


def without_password(url: str) -> str:
    """``url`` fit to print or record: the password of a ``user:password@`` replaced."""
    scheme, sep, rest = url.partition("://")
    end = min((i for i in map(rest.find, "/?#") if i >= 0), default=len(rest))
    userinfo, at, host = rest[:end].rpartition("@")
    if not sep or not at or ":" not in userinfo:
        return url
    user = userinfo.partition(":")[0]
    return f"{scheme}://{user}:<redacted>@{host}{rest[end:]}"
