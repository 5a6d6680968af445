"""The header serializer that gives non-UTF-8 header bytes back to the wire."""

from __future__ import annotations

import pytest
from aiohttp import http_writer
from multidict import CIMultiDict

from mcpeek.inspector.proxy import http_wire


def escaped(data: bytes) -> str:
    return data.decode("utf-8", "surrogateescape")  # as aiohttp's parsers decode


def test_utf8_headers_are_aiohttp_s_own_bytes() -> None:
    headers = CIMultiDict([("Content-Type", "application/json"), ("X-Name", "café")])
    assert http_wire.serialize_headers(
        "HTTP/1.1 200 OK", headers
    ) == http_writer._py_serialize_headers("HTTP/1.1 200 OK", headers)


def test_escaped_bytes_go_back_to_the_wire() -> None:
    headers = CIMultiDict([("X-Weird", escaped(b"\xff\xfe")), ("Set-Cookie", "a=1")])
    assert http_wire.serialize_headers("HTTP/1.1 200 OK", headers) == (
        b"HTTP/1.1 200 OK\r\nX-Weird: \xff\xfe\r\nSet-Cookie: a=1\r\n\r\n"
    )


@pytest.mark.parametrize("value", ["\xff\r\nInjected: 1", "\udcff\nx", "\udcff\x00"])
def test_control_characters_are_still_refused(value: str) -> None:
    with pytest.raises(ValueError, match="Forbidden control character"):
        http_wire.serialize_headers("HTTP/1.1 200 OK", CIMultiDict([("X-A", value)]))


def test_install_is_idempotent() -> None:
    http_wire.install()
    http_wire.install()
    assert http_writer._serialize_headers is http_wire.serialize_headers
    assert http_wire._AIOHTTP_SERIALIZE is not http_wire.serialize_headers
