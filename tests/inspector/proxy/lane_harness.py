"""Driving the HTTP relay's fast lane in tests: requests written and responses read
byte by byte on raw connections (the exchanges it served: the ``fast_count`` fixture)."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Awaitable, Callable

from aiohttp import web

from mcpeek.inspector.records import Http, SeqRecord
from tests.inspector.proxy.http_harness import RESULT, RPC, Proxied

Start = Callable[..., Awaitable[Proxied]]


async def json_upstream(request: web.Request) -> web.Response:
    body = await request.read()
    return web.json_response({**RESULT, "id": json.loads(body)["id"], "size": len(body)})


class HeldUpstream:
    """An upstream (its ``handler``) that answers as :func:`json_upstream` once released:
    an exchange kept under way (``arrived`` is set when its request is in)."""

    def __init__(self) -> None:
        self.arrived = asyncio.Event()
        self.release = asyncio.Event()

    async def handler(self, request: web.Request) -> web.Response:
        self.arrived.set()
        await self.release.wait()
        return await json_upstream(request)


def post(port: int, ident: int, *, pad: int = 0, extra: bytes = b"") -> bytes:
    body = json.dumps({**RPC, "id": ident, "params": {"pad": "x" * pad}}).encode()
    return (
        b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\n"
        b"%bContent-Length: %d\r\n\r\n%b" % (port, extra, len(body), body)
    )


async def read_response(reader: asyncio.StreamReader) -> tuple[bytes, bytes]:
    """One response's head and (de-chunked) body."""
    head = await reader.readuntil(b"\r\n\r\n")
    lower = head.lower()
    length = re.search(rb"\r\ncontent-length: *(\d+)", lower)
    if length is not None:
        return head, await reader.readexactly(int(length[1]))
    assert b"\r\ntransfer-encoding: chunked" in lower, head
    body = b""
    while size := int((await reader.readuntil(b"\r\n")).strip(), 16):
        body += await reader.readexactly(size)
        assert await reader.readexactly(2) == b"\r\n"
    assert await reader.readexactly(2) == b"\r\n"
    return head, body


def port_of(p: Proxied) -> int:
    return int(p.url.rsplit(":", 1)[1])


def ends(p: Proxied) -> list[str | None]:
    return [r.reason for r in p.http("end")]


async def settled(p: Proxied, count: int) -> None:
    await ended(p.records, count)


async def ended(records: list[SeqRecord], count: int) -> None:
    """Wait (a few seconds at most) for ``count`` exchanges to be recorded as ended."""
    await recorded(records, "end", count)


async def recorded(records: list[SeqRecord], phase: str, count: int) -> None:
    """Wait (a few seconds at most) for ``count`` HTTP records of ``phase``."""
    for _ in range(200):
        if sum(isinstance(r, Http) and r.phase == phase for r in records) >= count:
            return
        await asyncio.sleep(0.02)
