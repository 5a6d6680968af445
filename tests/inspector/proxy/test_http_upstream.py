"""The HTTP relay over its own upstream client: framing, connection reuse, TLS."""

from __future__ import annotations

import asyncio
import datetime
import ipaddress
import json
import ssl
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from mcpeek.inspector.records import Event, Http
from tests.inspector.proxy.http_harness import RESULT, RPC, relaying


async def test_a_chunked_response_is_relayed_byte_for_byte() -> None:
    event = b'data: {"jsonrpc":"2.0","id":1,"result":{}}\n\n'
    pieces = [event[:7], event[7:8], event[8:]]  # the event cut at odd places

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        await reader.readexactly(len(json.dumps(RPC)))
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n")
        writer.write(b"Transfer-Encoding: chunked\r\n\r\n")
        for piece in pieces:
            writer.write(b"%x\r\n%b\r\n" % (len(piece), piece))
            await writer.drain()
            await asyncio.sleep(0.01)
        writer.write(b"0\r\n\r\n")
        await writer.drain()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with (
        relaying(f"http://127.0.0.1:{port}/mcp") as (records, url),
        aiohttp.ClientSession() as client,
        client.post(url, json=RPC) as r,
    ):
        assert r.headers["Transfer-Encoding"] == "chunked"
        assert await r.read() == event
    server.close()
    ends = [r.reason for r in records if isinstance(r, Http) and r.phase == "end"]
    assert ends == ["complete"]


async def test_a_json_body_cut_short_ends_the_clients_response_unclean() -> None:
    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n")
        writer.write(b'Content-Length: 100\r\n\r\n{"jsonrpc":"2.0",')
        await writer.drain()
        await asyncio.sleep(0.05)
        writer.close()  # 82 bytes short

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with (
        relaying(f"http://127.0.0.1:{port}/mcp") as (records, url),
        aiohttp.ClientSession() as client,
        client.post(url, json=RPC) as r,
    ):
        assert r.headers["Content-Length"] == "100"
        with pytest.raises(aiohttp.ClientPayloadError):
            await r.read()
    server.close()
    ends = [r.reason for r in records if isinstance(r, Http) and r.phase == "end"]
    assert ends == ["upstream-closed"]


async def test_one_upstream_connection_serves_successive_exchanges(proxied) -> None:  # type: ignore[no-untyped-def]
    peers: list[object] = []

    async def upstream(request: web.Request) -> web.Response:
        assert request.transport is not None
        peers.append(request.transport.get_extra_info("peername"))
        return web.json_response(RESULT)

    p = await proxied(upstream)
    async with aiohttp.ClientSession() as client:
        for _ in range(4):
            async with client.post(p.url + "/mcp", json=RPC) as r:
                assert await r.json() == RESULT
    assert len(peers) == 4 and len(set(peers)) == 1


async def test_a_stream_the_client_leaves_closes_its_upstream_connection(proxied) -> None:  # type: ignore[no-untyped-def]
    closed = asyncio.Event()
    peers: list[object] = []

    async def upstream(request: web.Request) -> web.StreamResponse:
        assert request.transport is not None
        peers.append(request.transport.get_extra_info("peername"))
        if request.method == "POST":
            return web.json_response(RESULT)
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        await response.write(b": open\n\n")
        try:
            while True:
                await asyncio.sleep(0.02)
                await response.write(b": ping\n\n")
        except (ConnectionResetError, asyncio.CancelledError):
            closed.set()
            raise

    p = await proxied(upstream)
    async with aiohttp.ClientSession() as client:
        async with client.get(p.url + "/mcp") as r:
            assert await r.content.readuntil(b"\n\n") == b": open\n\n"
        # the client left mid-stream: that upstream connection is closed, not reused
        await asyncio.wait_for(closed.wait(), 10)
        async with client.post(p.url + "/mcp", json=RPC) as r:
            assert await r.json() == RESULT
    assert len(peers) == 2 and peers[0] != peers[1]


def _self_signed(tmp_path: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 that is its own CA, and its key."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "mcpeek test upstream")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = tmp_path / "upstream.pem", tmp_path / "upstream.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


@pytest.mark.parametrize("trusted", [True, False])
async def test_an_https_upstream(  # type: ignore[no-untyped-def]
    aiohttp_server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, trusted: bool
) -> None:
    cert, key = _self_signed(tmp_path)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)

    async def upstream(request: web.Request) -> web.Response:
        return web.json_response(RESULT)

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", upstream)
    server = await aiohttp_server(app, ssl=context)
    if trusted:  # the default verification, told of the test's CA as a user would tell it
        monkeypatch.setenv("SSL_CERT_FILE", str(cert))
    origin = f"https://127.0.0.1:{server.port}"
    async with (
        relaying(origin + "/mcp") as (records, url),
        aiohttp.ClientSession() as client,
        client.post(url, json=RPC) as r,
    ):
        assert r.status == (200 if trusted else 502)
        body = await r.read()
    errors = [r.message for r in records if isinstance(r, Event) and r.event == "upstream-error"]
    if trusted:
        assert json.loads(body) == RESULT and errors == []
    else:
        assert b"unreachable" in body
        assert len(errors) == 1 and "CERTIFICATE_VERIFY_FAILED" in errors[0]
