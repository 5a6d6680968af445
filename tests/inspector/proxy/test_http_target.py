"""What the HTTP relay sends upstream as the request target and as credentials."""

from __future__ import annotations

import asyncio
import base64
import json

import aiohttp
import pytest
from aiohttp import web

from mcpeek.inspector.proxy.guard import RequestGuard
from mcpeek.inspector.proxy.http import HttpRelay
from mcpeek.inspector.proxy.http_headers import basic_credentials
from mcpeek.inspector.records import Http, SeqRecord
from tests.inspector.proxy.http_harness import RESULT, RPC, listen

ODD_TARGETS = [
    "/h/../../etc/passwd",
    "/%2e%2e/%2e%2e/etc/passwd",
    "/%41",
    "/%zz",
    "/mcp?next=%2Fadmin",
    "//x",
    "/a%20b?q=a+b",
    "/mcp;v=1",
    "/mcp?x=%25&y",
]


async def test_the_request_target_is_forwarded_byte_for_byte() -> None:
    """#21.10: no dot segment resolved, no escape decoded or re-encoded, no slash added."""
    request_lines: list[bytes] = []

    async def raw_upstream(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        request_lines.append(head.split(b"\r\n", 1)[0])
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        await writer.drain()
        writer.close()

    upstream = await asyncio.start_server(raw_upstream, "127.0.0.1", 0)
    upstream_port = upstream.sockets[0].getsockname()[1]
    records: list[SeqRecord] = []
    guard = RequestGuard(0)
    try:
        async with HttpRelay(f"http://127.0.0.1:{upstream_port}/", records.extend, guard) as relay:
            runner, port = await listen(relay)
            guard.port = port
            for target in ODD_TARGETS:
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
                writer.write(
                    f"GET {target} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                    "Connection: close\r\n\r\n".encode()
                )
                answer = await asyncio.wait_for(reader.read(), 10)
                writer.close()
                assert answer.startswith(b"HTTP/1.1 200 "), (target, answer[:200])
            await runner.cleanup()
    finally:
        upstream.close()
    assert [line.decode() for line in request_lines] == [f"GET {t} HTTP/1.1" for t in ODD_TARGETS]
    recorded = [r.path for r in records if isinstance(r, Http) and r.phase == "request"]
    assert recorded == ODD_TARGETS


@pytest.fixture
async def upstream_seen(aiohttp_server):  # type: ignore[no-untyped-def]
    seen: list[dict[str, str]] = []

    async def handler(request: web.Request) -> web.Response:
        seen.append(dict(request.headers))
        return web.json_response(RESULT)

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handler)
    server = await aiohttp_server(app)
    return server.port, seen


@pytest.mark.parametrize(
    ("client_auth", "upstream_auth"),
    [
        (None, "Basic " + base64.b64encode(b"alice:pa:ss word").decode()),
        ("Bearer own-token", "Bearer own-token"),  # the client's own credentials win
    ],
)
async def test_upstream_userinfo_is_basic_credentials_never_a_host(  # type: ignore[no-untyped-def]
    upstream_seen, client_auth: str | None, upstream_auth: str
) -> None:
    """#21.4: ``http://alice:PW@host/`` sends ``Host: host:port``; the user and
    password go as Basic credentials, unless the client sent its own."""
    upstream_port, seen = upstream_seen
    records: list[SeqRecord] = []
    guard = RequestGuard(0)
    url = f"http://alice:pa%3Ass%20word@127.0.0.1:{upstream_port}/mcp"
    async with HttpRelay(url, records.extend, guard) as relay:
        runner, port = await listen(relay)
        guard.port = port
        headers = {"Authorization": client_auth} if client_auth else {}
        async with (
            aiohttp.ClientSession() as client,
            client.post(f"http://127.0.0.1:{port}/mcp", json=RPC, headers=headers) as r,
        ):
            assert r.status == 200
            assert json.loads(await r.read()) == RESULT
        await runner.cleanup()
    (headers_seen,) = seen
    assert headers_seen["Host"] == f"127.0.0.1:{upstream_port}"
    assert headers_seen["Authorization"] == upstream_auth


async def test_a_502_does_not_show_the_upstream_password(unused_tcp_port) -> None:  # type: ignore[no-untyped-def]
    records: list[SeqRecord] = []
    guard = RequestGuard(0)
    url = f"http://alice:s3cret@127.0.0.1:{unused_tcp_port}/mcp"
    async with HttpRelay(url, records.extend, guard) as relay:
        runner, port = await listen(relay)
        guard.port = port
        async with (
            aiohttp.ClientSession() as client,
            client.post(f"http://127.0.0.1:{port}/mcp", json=RPC) as r,
        ):
            assert r.status == 502
            text = await r.text()
        await runner.cleanup()
    assert "unreachable" in text and "s3cret" not in text and "alice" not in text
    assert "s3cret" not in repr(records)


def test_an_empty_userinfo_names_no_credentials() -> None:
    assert basic_credentials("", None) is None
    assert basic_credentials("bob", None) == "Basic " + base64.b64encode(b"bob:").decode()


@pytest.mark.parametrize(
    "target",
    [
        "2:{port}",  # CONNECT authority-form: appended to the origin, it named another host
        ".attacker.invalid:443",
        "http://127.0.0.1:{port}/mcp",  # absolute-form
        "*",  # asterisk-form (OPTIONS *)
    ],
)
async def test_a_target_that_is_not_origin_form_never_reaches_any_host(target: str) -> None:
    """The upstream's Basic credentials must never go to a host the client names."""
    heads: list[bytes] = []

    async def catch_all(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        heads.append(await reader.read(4096))
        writer.close()

    trap = await asyncio.start_server(catch_all, "127.0.0.1", 0)
    trap_port = trap.sockets[0].getsockname()[1]
    records: list[SeqRecord] = []
    guard = RequestGuard(0)
    upstream = f"http://user:pw@127.0.0.1:{trap_port}/mcp"
    try:
        async with HttpRelay(upstream, records.extend, guard) as relay:
            runner, port = await listen(relay)
            guard.port = port
            method = {"*": "OPTIONS", "http": "GET"}.get(
                target.split(":", maxsplit=1)[0], "CONNECT"
            )
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(
                f"{method} {target.format(port=trap_port)} HTTP/1.1\r\n"
                f"Host: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n".encode()
            )
            answer = await asyncio.wait_for(reader.read(), 10)
            writer.close()
            await runner.cleanup()
    finally:
        trap.close()
    assert answer.startswith(b"HTTP/1.1 400 "), answer[:200]
    assert heads == []  # no connection carried the request (nor its credentials) anywhere
    ends = [r for r in records if isinstance(r, Http) and r.phase == "end"]
    assert [e.reason for e in ends] == ["refused"]
