"""HTTP servers in a client's config: pointing them at a local ``mcpeek http``, and back.

mcpeek cannot start an HTTP proxy on a client's behalf, so ``wrap --http``
points each HTTP entry's ``url`` at a local ``mcpeek http`` the user starts
(the exact command is printed) and notes what it changed in a state file
beside the config (``FILE.mcpeek-wrap.json``): a local URL does not say
which upstream it stood for, and ``unwrap`` must give the original back
byte for byte. The proxy serves the upstream's path and query on its own
address, so the entry's new URL is ``http://127.0.0.1:PORT`` plus those.
A proxy never gets a port another entry's URL already names on this machine.

The printed commands hide the credentials an upstream URL holds (a password,
a secret query parameter) behind ``***``: the state file keeps the URL whole.
"""

from __future__ import annotations

import shlex
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

from mcpeek.inspector.capture.redact_targets import redacted_url
from mcpeek.inspector.clients import entries
from mcpeek.inspector.clients.jsonc import Member, Object, parse, string_value

#: ``mcpeek http``'s default port: the first HTTP server's proxy listens there.
FIRST_PORT = 6280
#: What stands for a credential in a printed URL.
HIDDEN = "***"
LOOPBACK_HOSTS = frozenset({"localhost", "::1"})


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
        """The command line that starts this entry's proxy, its credentials hidden
        (:func:`shown_url`)."""
        return proxy_command(self.upstream, self.listen)

    def as_json(self) -> dict[str, str]:
        return {
            "table": self.table,
            "server": self.server,
            "original": self.original,
            "local": self.local,
        }


def proxy_command(upstream: str, listen: str) -> str:
    """``mcpeek http --upstream URL --listen ADDR``, with the URL's credentials hidden."""
    shown = shown_url(upstream)
    line = shlex.join(["mcpeek", "http", "--upstream", shown, "--listen", listen])
    if shown != upstream:
        line += f"  ({HIDDEN} hides a credential of its url: put it back to run this)"
    return line


def shown_url(url: str) -> str:
    """``url`` with its password and secret parameters replaced by ``***`` (as a
    capture's header records them, but with a mark to type over)."""
    return redacted_url(url, hide=lambda _: HIDDEN)


def loopback_port(url: str) -> int | None:
    """The port a URL names on this machine (loopback host), else None."""
    try:
        parts = urlsplit(url)
        host, port = parts.hostname, parts.port
    except ValueError:
        return None
    if host is None or not (host in LOOPBACK_HOSTS or host.startswith("127.")):
        return None
    return port if port is not None else {"http": 80, "https": 443}.get(parts.scheme.lower())


def taken_ports(urls: Iterable[str]) -> set[int]:
    """The loopback ports the config's URLs already name: no proxy may take them."""
    return {port for url in urls if (port := loopback_port(url)) is not None}


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


def free_port(records: Sequence[Proxied], start: int, taken: Collection[int] = ()) -> int:
    """The first port from ``start`` on that no recorded proxy uses and no URL of the
    config names (``taken``)."""
    used = {record.listen for record in records}
    port = start
    while f"127.0.0.1:{port}" in used or port in taken:
        port += 1
    return port


def point_at_proxy(
    text: str,
    label: str,
    member: Member,
    records: list[Proxied],
    first_port: int,
    taken: Collection[int] = (),
) -> tuple[entries.Edit | None, str]:
    """The edit that points an HTTP entry at a new local proxy (appended to
    ``records``) and "", or None and why not."""
    entry = member.value
    assert isinstance(entry, Object)
    url = entry.get("url")
    current = text[url.value.start : url.value.end] if url is not None else ""
    known = find(records, label, member.key)
    if known is not None and known.local == current:
        return None, "already points at its mcpeek http"
    why = proxyable(string_value(url.value) if url is not None else None)
    if url is None or why is not None:
        return None, why or "it has no url"
    local = entries.quoted(
        local_url(str(string_value(url.value)), free_port(records, first_port, taken))
    )
    if known is not None:
        records.remove(known)  # its url was edited since: the new one is the upstream
    records.append(Proxied(label, member.key, current, local))
    return entries.Edit(url.value.start, url.value.end, local), ""


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
