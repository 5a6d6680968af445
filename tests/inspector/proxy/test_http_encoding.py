"""Compressed bodies: relayed exactly as they are, recorded decoded (#21.8)."""

from __future__ import annotations

import asyncio
import gzip
import json
import zlib

import aiohttp
import pytest
from aiohttp import web

from mcpeek.inspector.analysis.analyzer import analyze
from mcpeek.inspector.proxy.decoding import DecodeError, body_decoder
from mcpeek.inspector.records import Event, Header
from tests.inspector.proxy.http_harness import RESULT, RPC


def _deflate(data: bytes, wbits: int) -> bytes:
    packer = zlib.compressobj(wbits=wbits)
    return packer.compress(data) + packer.flush()


@pytest.mark.parametrize(
    ("coding", "pack"),
    [
        ("gzip", gzip.compress),
        ("deflate", lambda data: _deflate(data, 15)),  # zlib-wrapped, as RFC 9110 says
        ("deflate", lambda data: _deflate(data, -15)),  # raw, as some servers send it
    ],
)
async def test_a_compressed_json_response_is_relayed_as_is_and_recorded_decoded(  # type: ignore[no-untyped-def]
    proxied, coding: str, pack
) -> None:
    answer = json.dumps(RESULT).encode()
    packed = pack(answer)

    async def upstream(request: web.Request) -> web.Response:
        return web.Response(
            body=packed, headers={"Content-Type": "application/json", "Content-Encoding": coding}
        )

    p = await proxied(upstream)
    headers = {"Accept-Encoding": "gzip, deflate"}
    async with (
        aiohttp.ClientSession(auto_decompress=False) as client,
        client.post(p.url + "/mcp", json=RPC, headers=headers) as r,
    ):
        assert r.headers["Content-Encoding"] == coding
        assert await r.read() == packed
    assert p.msgs("s2c") == [answer]
    assert p.http("response")[0].encoding == coding
    # what show and lint see: the call was answered
    flows = analyze([Header(transport="http"), *p.records]).flows
    assert flows is not None and [f.status for f in flows] == ["complete"]


async def test_a_gzip_sse_stream_records_every_event_as_it_comes(proxied) -> None:  # type: ignore[no-untyped-def]
    events = [
        json.dumps({"jsonrpc": "2.0", "method": "notifications/progress"}),
        json.dumps(RESULT),
    ]
    first_recorded = asyncio.Event()
    sent: list[bytes] = []

    async def upstream(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(
            headers={"Content-Type": "text/event-stream", "Content-Encoding": "gzip"}
        )
        await response.prepare(request)
        packer = zlib.compressobj(wbits=31)
        for i, event in enumerate(events):
            piece = packer.compress(f"data: {event}\n\n".encode()) + packer.flush(zlib.Z_SYNC_FLUSH)
            sent.append(piece)
            await response.write(piece)
            if i == 0:  # the first event is recorded before the stream goes on
                await asyncio.wait_for(first_recorded.wait(), 10)
        sent.append(packer.flush())
        await response.write(sent[-1])
        await response.write_eof()
        return response

    p = await proxied(upstream)

    async def watch() -> None:
        while not p.msgs("s2c"):
            await asyncio.sleep(0.01)
        first_recorded.set()

    watcher = asyncio.ensure_future(watch())
    async with (
        aiohttp.ClientSession(auto_decompress=False) as client,
        client.post(p.url + "/mcp", json=RPC, headers={"Accept-Encoding": "gzip"}) as r,
    ):
        received = await r.read()
    await watcher
    assert received == b"".join(sent)
    assert [m.decode() for m in p.msgs("s2c")] == events
    assert p.http("end")[0].reason == "complete"


async def test_a_compressed_request_body_is_forwarded_as_is_and_recorded_decoded(proxied) -> None:  # type: ignore[no-untyped-def]
    got: list[bytes] = []

    async def upstream(request: web.Request) -> web.Response:
        got.append(await request.read())
        return web.json_response(RESULT)

    p = await proxied(upstream, upstream_options={"auto_decompress": False})
    message = json.dumps(RPC).encode()
    packed = gzip.compress(message)
    headers = {"Content-Type": "application/json", "Content-Encoding": "gzip"}
    async with (
        aiohttp.ClientSession() as client,
        client.post(p.url + "/mcp", data=packed, headers=headers) as r,
    ):
        assert r.status == 200
    assert got == [packed]
    assert p.msgs("c2s") == [message]
    assert p.http("request")[0].encoding == "gzip"


@pytest.mark.parametrize(
    ("coding", "body"),
    [("gzip", b"\x1f\x8b not really gzip"), ("x-unknown", b'{"jsonrpc":"2.0"}')],
)
async def test_a_body_that_does_not_decode_is_noted_and_still_relayed(  # type: ignore[no-untyped-def]
    proxied, coding: str, body: bytes
) -> None:
    async def upstream(request: web.Request) -> web.Response:
        return web.Response(
            body=body, headers={"Content-Type": "application/json", "Content-Encoding": coding}
        )

    p = await proxied(upstream)
    async with (
        aiohttp.ClientSession(auto_decompress=False) as client,
        client.post(p.url + "/mcp", json=RPC) as r,
    ):
        assert await r.read() == body
    notes = [r.message or "" for r in p.records if isinstance(r, Event) and r.event == "note"]
    assert any(coding in note for note in notes)
    assert p.msgs("s2c") == []
    (end,) = p.http("end")
    assert end.reason == "complete" and (end.body or end.body_b64)


def test_a_truncated_stream_does_not_decode() -> None:
    decoder = body_decoder("gzip")
    assert decoder is not None
    packed = gzip.compress(b"x" * 1000)
    assert decoder.feed(packed[:-8]) == b"x" * 1000  # the data is there; the trailer is not
    with pytest.raises(DecodeError):
        decoder.finish()
    assert body_decoder(None) is None and body_decoder("identity") is None


def test_stacked_codings_are_undone_in_reverse_order() -> None:
    decoder = body_decoder("deflate, gzip")
    assert decoder is not None
    packed = gzip.compress(_deflate(b"hello", 15))
    assert decoder.feed(packed[:5]) + decoder.feed(packed[5:]) + decoder.finish() == b"hello"


async def test_a_compressed_endpoint_event_is_not_rewritten(proxied) -> None:  # type: ignore[no-untyped-def]
    """The endpoint rewrite reads plain SSE only: in a gzip stream stored without
    compression the URL is there in clear, and rewriting it would break the CRC."""
    stream: list[bytes] = []

    async def upstream(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(
            headers={"Content-Type": "text/event-stream", "Content-Encoding": "gzip"}
        )
        await response.prepare(request)
        origin = f"http://{request.headers['Host']}"
        packer = zlib.compressobj(level=0, wbits=31)  # stored blocks: the text stays visible
        event = f"event: endpoint\ndata: {origin}/messages?s=1\n\n".encode()
        stream.append(packer.compress(event) + packer.flush())
        await response.write(stream[0])
        await response.write_eof()
        return response

    p = await proxied(upstream)
    async with (
        aiohttp.ClientSession(auto_decompress=False) as client,
        client.get(p.url + "/sse", headers={"Accept-Encoding": "gzip"}) as r,
    ):
        assert await r.read() == stream[0]
    assert gzip.decompress(stream[0]).startswith(b"event: endpoint\n")
    assert len(p.msgs("s2c")) == 1
