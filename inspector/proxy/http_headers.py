"""Which headers the HTTP relay passes on, and the upstream URL's own credentials."""

from __future__ import annotations

import base64
from urllib.parse import unquote

import aiohttp
from multidict import CIMultiDict, CIMultiDictProxy

HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "proxy-connection",
    }
)


def end_to_end(headers: CIMultiDict[str] | aiohttp.typedefs.LooseHeaders) -> CIMultiDict[str]:
    """The end-to-end headers: hop-by-hop ones and those ``Connection`` lists dropped."""
    # aiohttp's own (proxy) multidicts are read as they are: no copy per exchange.
    source = (
        headers if isinstance(headers, (CIMultiDict, CIMultiDictProxy)) else CIMultiDict(headers)
    )
    listed = {t.strip().lower() for v in source.getall("connection", ()) for t in v.split(",")}
    dropped = HOP_BY_HOP | listed if listed else HOP_BY_HOP
    return CIMultiDict([(k, v) for k, v in source.items() if k.lower() not in dropped])


def basic_credentials(user: str | None, password: str | None) -> str | None:
    """The ``Authorization`` value for the upstream URL's ``user:password@``, if any."""
    if user is None or (not user and password is None):  # http://@host/ names nobody
        return None
    pair = f"{unquote(user)}:{unquote(password or '')}".encode()
    return "Basic " + base64.b64encode(pair).decode("ascii")
