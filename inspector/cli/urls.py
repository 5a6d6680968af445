"""Checking the server URLs given on the command line (``replay --url``, ``http --upstream``)."""

from __future__ import annotations

from urllib.parse import urlsplit

from mcpeek.inspector.cli.base import UsageError


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


def without_password(url: str) -> str:
    """``url`` fit to print or record: the password of a ``user:password@`` replaced."""
    scheme, sep, rest = url.partition("://")
    end = min((i for i in map(rest.find, "/?#") if i >= 0), default=len(rest))
    userinfo, at, host = rest[:end].rpartition("@")
    if not sep or not at or ":" not in userinfo:
        return url
    user = userinfo.partition(":")[0]
    return f"{scheme}://{user}:<redacted>@{host}{rest[end:]}"
