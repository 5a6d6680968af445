"""Which recorded credentials a replay may send, and where.

A capture made with ``--no-redact`` keeps the client's Authorization, Cookie,
API keys… Replaying it to the server it was recorded from sends them back
where they came from; replaying it anywhere else would hand them to a third
party. So a replay to another origin leaves every credential header out
unless ``--send-credentials`` asks for them (``--header`` values are the
user's own choice and always sent).
"""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import urlsplit

from mcpeek.inspector.capture.redact_rules import is_secret_header

DEFAULT_PORTS = {"http": 80, "https": 443}


def origin(url: str) -> str | None:
    """``scheme://host:port`` of ``url`` (default port spelled out), or None when
    ``url`` is not an http(s) URL."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS or not parts.hostname:
        return None
    return f"{scheme}://{parts.hostname.lower()}:{port or DEFAULT_PORTS[scheme]}"


def recorded_origin(transport: str, target: object) -> str | None:
    """The origin a capture was recorded from: its upstream URL's (HTTP captures)."""
    return origin(target) if transport == "http" and isinstance(target, str) else None


class CredentialPolicy:
    """Drops recorded credential headers bound for an origin they did not come from."""

    def __init__(self, recorded: str | None, live_url: str, *, send_anyway: bool) -> None:
        live = origin(live_url)
        self.allowed = send_anyway or (recorded is not None and recorded == live)
        self.recorded = recorded
        self.live = live

    def split(self, headers: Iterable[tuple[str, str]]) -> tuple[list[tuple[str, str]], list[str]]:
        """The headers that may be sent, and the names of the credential ones held back."""
        if self.allowed:
            return list(headers), []
        kept, held = [], []
        for name, value in headers:
            if is_secret_header(name.lower()):
                held.append(name.lower())
            else:
                kept.append((name, value))
        return kept, held

    def note(self, names: Iterable[str]) -> str:
        where = f"recorded from {self.recorded}" if self.recorded else "recorded origin unknown"
        return (
            f"recorded credentials not sent to {self.live} ({where}): "
            f"{', '.join(sorted(set(names)))} (see --send-credentials)"
        )
