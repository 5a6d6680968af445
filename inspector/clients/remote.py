"""HTTP servers in a client's config: pointing them at a local ``mcpeek http``, and back.

mcpeek cannot start an HTTP proxy on a client's behalf, so ``wrap --http``
points each HTTP entry's ``url`` at a local ``mcpeek http`` the user starts
(the exact command is printed) and notes what it changed in a state file
beside the config (``FILE.mcpeek-wrap.json``): a local URL does not say
which upstream it stood for, and ``unwrap`` must give the original back
byte for byte. The proxy serves the upstream's path and query on its own
address, so the entry's new URL is ``http://127.0.0.1:PORT`` plus those.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

from mcpeek.inspector.clients import entries
from mcpeek.inspector.clients.jsonc import Member, Object, parse, string_value

#: ``mcpeek http``'s default port: the first HTTP server's proxy listens there.
FIRST_PORT = 6280


@dataclass(frozen=True)
class Proxied:
    """One HTTP entry pointed at a local proxy: where, and the URLs as JSON source text."""

    table: str
    server: str
    original: str
    local: str

    @property
    def upstream(self) -> str:
        return str(parse(self.original).value)  # type: ignore[union-attr]

    @property
    def listen(self) -> str:
        return urlsplit(str(parse(self.local).value)).netloc  # type: ignore[union-attr]

    def command(self) -> str:
        """The command line that starts this entry's proxy."""
        return shlex.join(["mcpeek", "http", "--upstream", self.upstream, "--listen", self.listen])

    def as_json(self) -> dict[str, str]:
        return {
            "table": self.table,
            "server": self.server,
            "original": self.original,
            "local": self.local,
        }


def local_url(url: str, port: int) -> str:
    """The URL a client uses to reach ``url`` through ``mcpeek http`` on ``port``."""
    parts = urlsplit(url)
    return urlunsplit(("http", f"127.0.0.1:{port}", parts.path, parts.query, ""))


def proxyable(url: str | None) -> str | None:
    """Why an entry's URL cannot be proxied (None when it can)."""
    if url is None:
        return "its url is not a string"
    if "${" in url:
        return "its url holds variables the client expands"
    try:
        parts = urlsplit(url)
        _ = parts.port
    except ValueError:
        return "its url is not a valid URL"
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        return "its url is not an http(s) URL"
    return None


def find(records: Sequence[Proxied], table: str, server: str) -> Proxied | None:
    for record in records:
        if (record.table, record.server) == (table, server):
            return record
    return None


def free_port(records: Sequence[Proxied], start: int) -> int:
    """The first port from ``start`` on that no recorded proxy uses."""
    used = {record.listen for record in records}
    port = start
    while f"127.0.0.1:{port}" in used:
        port += 1
    return port


def point_at_proxy(
    text: str, label: str, member: Member, records: list[Proxied], first_port: int
) -> tuple[entries.Edit | None, str]:
    """The edit that points an HTTP entry at a new local proxy (appended to
    ``records``), or None and why not."""
    entry = member.value
    assert isinstance(entry, Object)
    url = entry.get("url")
    current = text[url.value.start : url.value.end] if url is not None else ""
    known = find(records, label, member.key)
    if known is not None and known.local == current:
        return None, "already points at its mcpeek http"
    why = proxyable(string_value(url.value) if url is not None else None)
    if url is None or why is not None:
        return None, f"left as it is: {why}"
    local = entries.quoted(local_url(str(string_value(url.value)), free_port(records, first_port)))
    if known is not None:
        records.remove(known)  # its url was edited since: the new one is the upstream
    records.append(Proxied(label, member.key, current, local))
    return entries.Edit(url.value.start, url.value.end, local), "pointed at a local mcpeek http"


def point_back(
    text: str, label: str, member: Member, records: list[Proxied]
) -> entries.Edit | None:
    """The edit that gives a proxied entry its original URL back (its record is
    removed from ``records``); None when the entry is not one of them."""
    entry = member.value
    known = find(records, label, member.key)
    url = entry.get("url") if isinstance(entry, Object) else None
    if known is None or url is None or text[url.value.start : url.value.end] != known.local:
        return None
    records.remove(known)
    return entries.Edit(url.value.start, url.value.end, known.original)
