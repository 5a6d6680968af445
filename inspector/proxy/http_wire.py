"""Header bytes that are not UTF-8 leave the proxy as they arrived.

aiohttp's parsers decode such header bytes with ``surrogateescape``
(``X-Weird: \\xff\\xfe`` becomes ``'\\udcff\\udcfe'``), but its serializer
encodes what it sends as strict UTF-8: the C one silently drops the lone
surrogates (the client would get ``X-Weird: `` blank), the pure-Python one
raises. Neither the server response nor the client request offers a public
hook on the header bytes, so :func:`install` swaps in, for the process, a
serializer that gives such headers their original bytes back (obs-text,
allowed in a field value by RFC 9110) and defers to aiohttp's own for
everything else, which is all but never.

The swap replaces the private ``aiohttp.http_writer._serialize_headers``,
which ``StreamWriter.write_headers`` looks up on every call, for requests and
responses alike. Should a later aiohttp no longer have it, :func:`install`
does nothing: such a value is then blanked on the wire, as before, while the
capture still records its exact bytes (``headers_b64``).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable

import aiohttp.http_writer as _aiohttp_writer
from multidict import CIMultiDict

from mcpeek.inspector.records import is_utf8

#: What aiohttp refuses in a header against injection (RFC 9110 §5.5): any control
#: character but HTAB.
HEADER_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")
# aiohttp's own serializer (the C one when built), taken before any swap.
_AIOHTTP_SERIALIZE: Callable[[str, CIMultiDict[str]], bytes] = getattr(
    _aiohttp_writer, "_serialize_headers", _aiohttp_writer._py_serialize_headers
)


def serialize_headers(status_line: str, headers: CIMultiDict[str]) -> bytes:
    """Status line and headers as bytes, with ``surrogateescape`` bytes restored."""
    original = _AIOHTTP_SERIALIZE
    # One test of the whole head at C speed: all but always ASCII.
    if "".join(itertools.chain.from_iterable(headers.items())).isascii() and status_line.isascii():
        return original(status_line, headers)
    if is_utf8(status_line) and all(is_utf8(k) and is_utf8(v) for k, v in headers.items()):
        return original(status_line, headers)
    parts = [status_line]
    for key, val in headers.items():
        name, value = str(key), str(val)
        if HEADER_CONTROL.search(name) or HEADER_CONTROL.search(value):
            raise ValueError(
                "Forbidden control character detected in headers. "
                "Potential header injection attack."
            )
        parts.append(f"{name}: {value}")
    if HEADER_CONTROL.search(status_line):
        raise ValueError("Forbidden control character detected in the status line.")
    try:
        return ("\r\n".join(parts) + "\r\n\r\n").encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a lone surrogate that stands for no byte
        return original(status_line, headers)


def install() -> None:
    """Use :func:`serialize_headers` for every HTTP message aiohttp writes (idempotent)."""
    current = getattr(_aiohttp_writer, "_serialize_headers", None)
    if current is None or current is serialize_headers:
        return
    _aiohttp_writer._serialize_headers = serialize_headers
