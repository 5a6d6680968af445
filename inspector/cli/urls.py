"""Checking the URLs given on the command line (``replay --url``, ``http --upstream``)
and the origins (``http --allow-origin``)."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from mcpeek.inspector.capture.redact_targets import redacted_url
from mcpeek.inspector.cli.base import UsageError, shown_argument
from mcpeek.inspector.proxy.guard import is_loopback_host

# Listening on these, a socket answers on every address of the machine.
ANY_ADDRESS = frozenset({"", "0.0.0.0", "::"})
# A URI scheme (RFC 3986 section 3.1): browser extensions send theirs as origins too.
SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*")
DEFAULT_PORTS = {"http": 80, "https": 443}
# An origin is the opaque "null" or scheme://host[:port] (RFC 6454 section 6.2).
ORIGIN_FORM = "expected scheme://host[:port], e.g. http://localhost:5173"


def check_http_url(option: str, url: str) -> None:
    """``url`` must be an http(s) URL with a host (and a valid port, if any); else a
    :class:`UsageError` naming ``option`` (e.g. ``--url``)."""
    shown = shown_argument(redacted_url(url))
    # urlsplit() drops tabs and line ends without a word: the URL used would not be
    # the one given (and every line that prints it would be cut in two).
    control = next((c for c in url if c < " " or c == "\x7f"), None)
    if control is not None:
        raise UsageError(f"{option} {shown} holds the control character {control!r}")
    # A byte that is not UTF-8 (a lone surrogate in argv) is in no host, and yarl
    # drops it from a path unsaid: the same surprise.
    odd = next((ord(c) - 0xDC00 for c in url if "\udc80" <= c <= "\udcff"), None)
    if odd is not None:
        raise UsageError(
            f"{option} {shown} holds the byte \\x{odd:02x}, which is not UTF-8: "
            f"percent-encode it (%{odd:02X})"
        )
    try:
        parts = urlsplit(url)
        _ = parts.port  # raises on a port that is not a number in 0-65535
    except ValueError as exc:
        raise UsageError(f"{option} {shown} is not a valid URL: {exc}") from None
    if parts.scheme.lower() not in ("http", "https"):
        raise UsageError(f"{option} {shown}: expected an http:// or https:// URL")
    if not parts.hostname:
        raise UsageError(f"{option} {shown} names no host")
    if parts.port == 0:  # (a listener's "any port"; nothing can be reached on it)
        raise UsageError(f"{option} {shown}: port 0 is no server's port")


def check_origins(option: str, origins: list[str]) -> None:
    """Each of ``origins`` (given with ``option``) checked by :func:`check_origin`."""
    for origin in origins:
        check_origin(option, origin)


def check_origin(option: str, origin: str) -> None:
    """``origin`` must be one a browser can send in an ``Origin`` header (RFC 6454):
    ``scheme://host[:port]``, no path, no user, no default port (a browser leaves
    it out), or ``null``. Anything else could never match a request: a
    :class:`UsageError` naming ``option`` says why, rather than a guard that
    silently refuses the browser the user meant to let in. A trailing ``/`` is
    dropped, as the guard drops it."""
    if origin == "null":
        return
    trimmed = origin.rstrip("/")
    scheme, sep, authority = trimmed.partition("://")
    if not sep or not SCHEME.fullmatch(scheme):
        raise UsageError(f"{option} {origin!r} is not an origin: {ORIGIN_FORM}")
    extra = next((c for c in authority if c in "/?#@" or c.isspace()), None)
    if extra is not None:
        what = "a user" if extra == "@" else "a space" if extra.isspace() else "a path"
        if extra in "?#":
            what = "a query" if extra == "?" else "a fragment"
        raise UsageError(f"{option} {origin!r} has {what}; an origin has none: {ORIGIN_FORM}")
    try:
        parts = urlsplit(trimmed)
        port = parts.port  # raises on a port that is not a number in 0-65535
    except ValueError as exc:
        raise UsageError(f"{option} {origin!r} is not a valid origin: {exc}") from None
    if not parts.hostname:
        raise UsageError(f"{option} {origin!r} names no host: {ORIGIN_FORM}")
    if port is not None and DEFAULT_PORTS.get(scheme.lower()) == port:
        bare = f"{scheme}://{authority.rpartition(':')[0]}"
        raise UsageError(
            f"{option} {origin!r}: a browser sends this origin without its default port, "
            f"as {bare!r}; give that"
        )


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
