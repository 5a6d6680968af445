"""Which headers the HTTP relay passes on, and the upstream URL's own credentials."""

from __future__ import annotations

import base64
from urllib.parse import unquote

import aiohttp
from multidict import CIMultiDict

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
    # All copied at C speed, then the few names to drop looked up: a test of every
    # name, lower-cased in Python, cost twice as much (on every request and response).
    out = CIMultiDict(headers)
    listed = {t.strip().lower() for v in out.getall("connection", ()) for t in v.split(",")}
    for name in HOP_BY_HOP | listed if listed else HOP_BY_HOP:
        if name in out:
            del out[name]  # every value of it
    return out


def basic_credentials(user: str | None, password: str | None) -> str | None:
    """The ``Authorization`` value for the upstream URL's ``user:password@``, if any."""
    if user is None or (not user and password is None):  # http://@host/ names nobody
        return None
    pair = f"{unquote(user)}:{unquote(password or '')}".encode()
    return "Basic " + base64.b64encode(pair).decode("ascii")
