"""The HTTP relay against upstreams that misbehave on purpose (pytest-aiohttp, loopback only)."""

from __future__ import annotations

import asyncio
import gzip
import json
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web

from mcpeek.inspector.analysis import AnalysisListener, Conversation, Flow
from mcpeek.inspector.analysis.analyzer import analyze
from mcpeek.inspector.capture import CaptureWriter, read_records
from mcpeek.inspector.proxy.guard import RequestGuard
from mcpeek.inspector.proxy.http import HttpRelay
from mcpeek.inspector.records import Event, Header, Http, SeqRecord, header_bytes
from mcpeek.inspector.views.session import SessionModel
from mcpeek.rules.testing import lint_records
from tests.inspector.proxy.http_harness import RESULT, RPC, listen


async def test_json_exchange_is_relayed_and_recorded(proxied) -> None:  # type: ignore[no-untyped-def]
    seen: dict[str, object] = {}

    async def upstream(request: web.Request) -> web.Response:
        seen["host"] = request.headers["Host"]
        seen["headers"] = dict(request.headers)
        seen["body"] = await request.read()
        return web.Response(
            body=json.dumps(RESULT).encode(),
            content_type="application/json",
            headers={"Mcp-Session-Id": "S1", "X-Custom": "kept"},
        )

    p = await proxied(upstream)
    body = json.dumps(RPC, indent=1).encode()  # odd whitespace must survive
    async with (
        aiohttp.ClientSession() as client,
        client.post(
            p.url + "/mcp",
            data=body,
            headers={
                "Content-Type": "application/json",
                "Accept": "application/json, text/event-stream",
                "MCP-Protocol-Version": "2026-07-28",
                "Mcp-Method": "tools/call",
                "Authorization": "Bearer secret",
                "Connection": "keep-alive",
            },
        ) as response,
    ):
        assert response.status == 200
        assert response.headers["Mcp-Session-Id"] == "S1"
        assert response.headers["X-Custom"] == "kept"
        answer = await response.read()
    assert seen["body"] == body
    assert seen["host"] == f"127.0.0.1:{p.upstream.port}"
    headers = seen["headers"]
    assert isinstance(headers, dict)
    assert headers["Authorization"] == "Bearer secret"
    assert headers["MCP-Protocol-Version"] == "2026-07-28" and headers["Mcp-Method"] == "tools/call"
    sent = {k.lower(): v for k, v in p.http("request")[0].headers or []}
    got = {k.lower(): v for k, v in headers.items()}
    # end to end: the same headers both ways, but Host and the hop-by-hop Connection
    assert {k: v for k, v in sent.items() if k not in ("host", "connection")} == {
        k: v for k, v in got.items() if k != "host"
    }
    assert answer == json.dumps(RESULT).encode()
    assert p.msgs("c2s") == [body] and p.msgs("s2c") == [answer]
    (req,) = p.http("request")
    assert req.method == "POST" and req.path == "/mcp" and req.x == "x1"
    assert p.http("response")[0].status == 200
    assert p.http("end")[0].reason == "complete"
    kinds = [(type(r).__name__, getattr(r, "phase", getattr(r, "dir", ""))) for r in p.records]
    assert kinds == [
        ("Http", "request"),
        ("Msg", "c2s"),
        ("Http", "response"),
        ("Msg", "s2c"),
        ("Http", "end"),
    ]


async def test_sse_is_streamed_event_by_event(proxied) -> None:  # type: ignore[no-untyped-def]
    first_arrived = asyncio.Event()

    async def upstream(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        await response.write(b'data: {"jsonrpc":"2.0","method":"notifications/progress"}\n\n')
        await asyncio.wait_for(first_arrived.wait(), 10)  # held until the client has event 1
        await response.write(b": keep-alive\n\n")
        await response.write(b"data: " + json.dumps(RESULT).encode() + b"\n\n")
        await response.write_eof()
        return response

    p = await proxied(upstream)
    received = b""
    async with aiohttp.ClientSession() as client, client.post(p.url + "/mcp", json=RPC) as response:
        async for chunk in response.content.iter_any():
            received += chunk
            if b"notifications/progress" in received:
                first_arrived.set()
    assert received.count(b"data:") == 2 and b": keep-alive" in received
    assert len(p.msgs("s2c")) == 2
    assert p.http("end")[0].reason == "complete"


@pytest.mark.parametrize("eol", [b"\n", b"\r", b"\r\n"])
async def test_sse_line_ends_and_a_crlf_split_across_chunks(proxied, eol: bytes) -> None:  # type: ignore[no-untyped-def]
    event = b"data: " + json.dumps(RESULT).encode() + eol + eol
    pieces = [event[: len(event) - len(eol) - 1], event[len(event) - len(eol) - 1 :]]

    async def upstream(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        for piece in [b"id: 7" + eol, *pieces]:
            await response.write(piece)
            await asyncio.sleep(0.02)
        await response.write_eof()
        return response

    p = await proxied(upstream)
    async with aiohttp.ClientSession() as client, client.post(p.url + "/mcp", json=RPC) as r:
        received = await r.read()
    assert received == b"id: 7" + eol + event
    assert p.msgs("s2c") == [json.dumps(RESULT).encode()]


async def test_half_written_event_and_abrupt_close(proxied) -> None:  # type: ignore[no-untyped-def]
    async def upstream(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        await response.write(b'data: {"jsonrpc":"2.0","method":"notifications/progress"}\n\n')
        await response.write(b'data: {"jsonrpc":"2.0","id":1,"res')
        await asyncio.sleep(0.05)
        assert request.transport is not None
        request.transport.close()  # the upstream dies mid-event
        return response

    p = await proxied(upstream)
    async with aiohttp.ClientSession() as client, client.post(p.url + "/mcp", json=RPC) as r:
        with pytest.raises(aiohttp.ClientPayloadError):
            await r.read()
    assert len(p.msgs("s2c")) == 1
    (end,) = p.http("end")
    assert end.reason == "upstream-closed"
    assert end.truncated and end.body is not None and end.body.startswith('data: {"jsonrpc"')


async def test_twenty_megabyte_bodies(proxied) -> None:  # type: ignore[no-untyped-def]
    big = {"jsonrpc": "2.0", "id": 1, "method": "x", "params": {"blob": "é" * (10 * 1024 * 1024)}}

    async def upstream(request: web.Request) -> web.Response:
        body = await request.read()
        return web.Response(body=body, content_type="application/json")

    p = await proxied(upstream)
    body = json.dumps(big, ensure_ascii=False).encode()
    assert len(body) > 20 * 1024 * 1024
    async with (
        aiohttp.ClientSession() as client,
        client.post(p.url + "/mcp", data=body, headers={"Content-Type": "application/json"}) as r,
    ):
        assert await r.read() == body
    assert p.msgs("c2s") == [body] and p.msgs("s2c") == [body]


class _Flows(AnalysisListener):
    def __init__(self, ended: list[Flow]) -> None:
        self.ended = ended

    def on_flow_end(self, flow: Flow, conversation: Conversation) -> None:
        self.ended.append(flow)


async def test_unreachable_upstream_gives_502(aiohttp_server, unused_tcp_port) -> None:  # type: ignore[no-untyped-def]
    records: list[SeqRecord] = []
    guard = RequestGuard(0)
    async with HttpRelay(f"http://127.0.0.1:{unused_tcp_port}/mcp", records.extend, guard) as relay:
        runner, port = await listen(relay)
        guard.port = port
        async with (
            aiohttp.ClientSession() as client,
            client.post(f"http://127.0.0.1:{port}/mcp", json=RPC) as r,
        ):
            assert r.status == 502
            assert r.headers["Content-Type"].startswith("text/plain")
            assert "unreachable" in await r.text()
        await runner.cleanup()
    assert any(isinstance(e, Event) and e.event == "upstream-error" for e in records)
    assert [r.reason for r in records if isinstance(r, Http) and r.phase == "end"] == [
        "upstream-error"
    ]
    # mcpeek answered, not the server: the call ends "by-proxy" and no rule says the
    # server left it unanswered (it never reached the server).
    header = Header(created="2026-12-01T00:00:00Z", transport="http", target="u", tool="t")
    flows: list[Flow] = []
    analyze([header, *records], _Flows(flows))
    assert [(f.method, f.status) for f in flows] == [("tools/call", "by-proxy")]
    rules = [r.rule for r in lint_records([header, *records])]
    assert "request.unanswered" not in rules and rules  # the client's own findings stay
    # The viewer shows the proxy's answer with the flow (its Http tab), the rules did not.
    model = SessionModel("unreachable.jsonl")
    model.feed([header, *records])
    model.finish()
    (item,) = model.items
    assert item.flow.status == "by-proxy"
    (x,) = model.exchanges
    assert [(r.phase, r.status) for r in model.exchanges[x]] == [
        ("request", None),
        ("response", 502),
        ("end", None),
    ]


async def test_client_disconnect_closes_the_upstream_request(proxied) -> None:  # type: ignore[no-untyped-def]
    upstream_saw_close = asyncio.Event()

    async def upstream(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        try:
            for _ in range(200):
                await response.write(b": keep-alive\n\n")
                await asyncio.sleep(0.05)
        except (ConnectionResetError, asyncio.CancelledError):
            upstream_saw_close.set()
            raise
        return response

    p = await proxied(upstream)
    async with aiohttp.ClientSession() as client:
        response = await client.post(p.url + "/mcp", json=RPC)
        await response.content.readany()
        response.close()  # the client goes away: in 2026-07-28 this cancels the request
    await asyncio.wait_for(upstream_saw_close.wait(), 10)
    for _ in range(100):
        if p.http("end"):
            break
        await asyncio.sleep(0.05)
    assert [e.reason for e in p.http("end")] == ["client-closed"]


@pytest.mark.parametrize(
    ("headers", "allowed"),
    [
        ({}, True),
        ({"Origin": "http://localhost:3000"}, True),
        ({"Origin": "https://evil.example"}, False),
        ({"Host": "evil.example"}, False),
        ({"Origin": "null"}, False),
    ],
)
async def test_dns_rebinding_guard(proxied, headers: dict[str, str], allowed: bool) -> None:  # type: ignore[no-untyped-def]
    async def upstream(request: web.Request) -> web.Response:
        return web.json_response(RESULT)

    p = await proxied(upstream)
    async with (
        aiohttp.ClientSession() as client,
        client.post(p.url + "/mcp", json=RPC, headers=headers) as r,
    ):
        assert (r.status == 200) is allowed
        if not allowed:
            assert r.status == 403 and "forbidden" in await r.text()


async def test_compression_passes_through_untouched(proxied) -> None:  # type: ignore[no-untyped-def]
    packed = gzip.compress(json.dumps(RESULT).encode())

    async def upstream(request: web.Request) -> web.Response:
        return web.Response(
            body=packed, headers={"Content-Type": "application/json", "Content-Encoding": "gzip"}
        )

    p = await proxied(upstream)
    async with (
        aiohttp.ClientSession(auto_decompress=False) as client,
        client.post(p.url + "/mcp", json=RPC, headers={"Accept-Encoding": "gzip"}) as r,
    ):
        assert r.headers["Content-Encoding"] == "gzip"
        assert await r.read() == packed


async def test_html_error_page_is_stored_as_a_body(proxied) -> None:  # type: ignore[no-untyped-def]
    page = "<html>" + "x" * 100_000 + "</html>"

    async def upstream(request: web.Request) -> web.Response:
        return web.Response(status=500, text=page, content_type="text/html")

    p = await proxied(upstream)
    async with aiohttp.ClientSession() as client, client.post(p.url + "/mcp", json=RPC) as r:
        assert r.status == 500 and await r.text() == page
    (end,) = p.http("end")
    assert end.truncated and end.body is not None and len(end.body) == 64 * 1024
    assert p.msgs("s2c") == []


async def test_notification_202_and_get_delete(proxied) -> None:  # type: ignore[no-untyped-def]
    async def upstream(request: web.Request) -> web.StreamResponse:
        if request.method == "POST":
            return web.Response(status=202)
        if request.method == "DELETE":
            return web.Response(status=200)
        return web.Response(status=405)

    p = await proxied(upstream)
    async with aiohttp.ClientSession() as client:
        async with client.post(
            p.url + "/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"}
        ) as r:
            assert r.status == 202
        async with client.get(p.url + "/mcp", headers={"Mcp-Session-Id": "S"}) as r:
            assert r.status == 405
        async with client.delete(p.url + "/mcp", headers={"Mcp-Session-Id": "S"}) as r:
            assert r.status == 200
    assert [r.method for r in p.http("request")] == ["POST", "GET", "DELETE"]
    assert [r.status for r in p.http("response")] == [202, 405, 200]


async def test_oauth_metadata_names_the_proxy(proxied) -> None:  # type: ignore[no-untyped-def]
    async def upstream(request: web.Request) -> web.Response:
        origin = f"http://{request.headers['Host']}"
        if request.path.startswith("/.well-known/oauth-protected-resource"):
            return web.json_response(
                {"resource": origin + "/mcp", "authorization_servers": ["https://auth.example"]}
            )
        return web.Response(
            status=401,
            headers={
                "WWW-Authenticate": f'Bearer resource_metadata="{origin}'
                '/.well-known/oauth-protected-resource/mcp"'
            },
        )

    p = await proxied(upstream)
    async with aiohttp.ClientSession() as client:
        async with client.post(p.url + "/mcp", json=RPC) as r:
            assert r.status == 401
            challenge = r.headers["WWW-Authenticate"]
        assert f'resource_metadata="{p.url}/.well-known/' in challenge
        async with client.get(p.url + "/.well-known/oauth-protected-resource/mcp") as r:
            document = await r.json()
    assert document["resource"] == p.url + "/mcp"
    assert document["authorization_servers"] == ["https://auth.example"]


async def test_hundred_concurrent_streams(proxied) -> None:  # type: ignore[no-untyped-def]
    async def upstream(request: web.Request) -> web.StreamResponse:
        message = await request.json()
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        await asyncio.sleep(0.2)
        answer = {"jsonrpc": "2.0", "id": message["id"], "result": {}}
        await response.write(b"data: " + json.dumps(answer).encode() + b"\n\n")
        await response.write_eof()
        return response

    p = await proxied(upstream)

    async def call(i: int) -> int:
        async with client.post(p.url + "/mcp", json={**RPC, "id": i}) as r:
            text = await r.text()
            return int(json.loads(text.split("data: ", 1)[1])["id"])

    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as client:
        ids = await asyncio.gather(*(call(i) for i in range(100)))
    assert sorted(ids) == list(range(100))
    assert len(p.msgs("s2c")) == 100 and len(p.msgs("c2s")) == 100
    assert {e.reason for e in p.http("end")} == {"complete"}


@pytest.mark.e2e  # thirty seconds of waiting, on purpose
async def test_a_thirty_second_idle_listen_stream_stays_open(proxied) -> None:  # type: ignore[no-untyped-def]
    """No read timeout on either side: only keep-alives for 30 s, then the result."""

    async def upstream(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        for _ in range(3):
            await asyncio.sleep(10)
            await response.write(b": keep-alive\n\n")
        await response.write(b"data: " + json.dumps(RESULT).encode() + b"\n\n")
        await response.write_eof()
        return response

    p = await proxied(upstream)
    listen = {"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen", "params": {}}
    async with aiohttp.ClientSession() as client, client.post(p.url + "/mcp", json=listen) as r:
        body = await r.read()
    assert body.count(b": keep-alive") == 3 and body.endswith(b"\n\n")
    assert p.http("end")[0].reason == "complete" and len(p.msgs("s2c")) == 1


async def test_a_slowloris_client_does_not_block_others(proxied) -> None:  # type: ignore[no-untyped-def]
    async def upstream(request: web.Request) -> web.Response:
        return web.json_response(RESULT)

    p = await proxied(upstream)
    port = int(p.url.rsplit(":", 1)[1])
    _, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n" % port)  # and then nothing
    await writer.drain()
    try:
        async with aiohttp.ClientSession() as client:
            for _ in range(5):
                async with client.post(p.url + "/mcp", json=RPC) as r:
                    assert r.status == 200
    finally:
        writer.close()


async def test_the_old_http_sse_endpoint_event_points_at_the_proxy(proxied) -> None:  # type: ignore[no-untyped-def]
    async def upstream(request: web.Request) -> web.StreamResponse:
        if request.method == "GET":
            response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
            await response.prepare(request)
            origin = f"http://{request.headers['Host']}"
            await response.write(f"event: endpoint\ndata: {origin}/messages?s=1\n\n".encode())
            await response.write_eof()
            return response
        return web.Response(status=202)

    p = await proxied(upstream)
    async with aiohttp.ClientSession() as client:
        async with client.get(p.url + "/sse") as r:
            text = await r.text()
        assert f"data: {p.url}/messages?s=1" in text
        async with client.post(p.url + "/messages?s=1", json=RPC) as r:
            assert r.status == 202


async def test_an_sse_answer_that_mentions_the_upstream_url_passes_unchanged(proxied) -> None:  # type: ignore[no-untyped-def]
    """Only a legacy endpoint event is rewritten: a tool result on a POST's SSE stream
    that names the upstream's URL and the word "endpoint" is relayed byte for byte."""
    sent: list[bytes] = []

    async def upstream(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        origin = f"http://{request.headers['Host']}"
        text = f"the endpoint is {origin}/mcp"
        result = {
            "jsonrpc": "2.0",
            "id": 1,
            "result": {"content": [{"type": "text", "text": text}]},
        }
        event = f"event: message\ndata: {json.dumps(result)}\n\n".encode()
        sent.append(event)
        await response.write(event)
        await response.write_eof()
        return response

    p = await proxied(upstream)
    async with aiohttp.ClientSession() as client:
        headers = {"Accept": "application/json, text/event-stream"}
        async with client.post(p.url + "/mcp", json=RPC, headers=headers) as r:
            got = await r.read()
    assert got == sent[0]


WEIRD_RESPONSE = (
    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Weird: \xff\xfe\r\n"
    b"Set-Cookie: a=1\r\nSet-Cookie: b=2\r\nContent-Length: 2\r\n\r\n{}"
)


async def test_header_bytes_that_are_not_utf8_pass_and_are_recorded(  # type: ignore[no-untyped-def]
    aiohttp_server, tmp_path: Path
) -> None:
    upstream_got: list[bytes] = []

    async def raw_upstream(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        upstream_got.append(await reader.readuntil(b"\r\n\r\n"))
        writer.write(WEIRD_RESPONSE)  # no HTTP library would send these header bytes
        await writer.drain()
        writer.close()

    upstream = await asyncio.start_server(raw_upstream, "127.0.0.1", 0)
    upstream_port = upstream.sockets[0].getsockname()[1]
    records: list[SeqRecord] = []
    guard = RequestGuard(0)
    try:
        relay = HttpRelay(f"http://127.0.0.1:{upstream_port}/mcp", records.extend, guard)
        async with relay:
            runner, port = await listen(relay)
            guard.port = port
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(
                b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\n"
                b"X-Req: \xc3\x28z\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}" % port
            )
            answer = await asyncio.wait_for(reader.read(), 10)
            writer.close()
            await runner.cleanup()
    finally:
        upstream.close()
    head, _, body = answer.partition(b"\r\n\r\n")
    # the client gets the upstream's header bytes unchanged, and the upstream the client's
    assert b"\r\nX-Weird: \xff\xfe\r\n" in head
    assert b"\r\nSet-Cookie: a=1\r\nSet-Cookie: b=2\r\n" in head and body == b"{}"
    assert b"\r\nX-Req: \xc3\x28z\r\n" in upstream_got[0]
    # the capture keeps every record, with the exact bytes of every header
    path = tmp_path / "cap.jsonl"
    with CaptureWriter(path, transport="http", target="u", redact=False) as capture:
        capture.write_many(records)
    _, back, problems = read_records(path)
    assert problems == []
    assert [(type(r).__name__, getattr(r, "phase", "")) for r in back] == [
        ("Http", "request"),
        ("Msg", ""),
        ("Http", "response"),
        ("Msg", ""),
        ("Http", "end"),
    ]
    request, response = (r for r in back if isinstance(r, Http) and r.headers)
    assert ("x-req", b"\xc3\x28z") in header_bytes(request)
    assert response.status == 200
    assert header_bytes(response) == [
        ("content-type", b"application/json"),
        ("x-weird", b"\xff\xfe"),
        ("set-cookie", b"a=1"),
        ("set-cookie", b"b=2"),
        ("content-length", b"2"),
    ]


HEADER = Header(created="2026-12-01T00:00:00Z", transport="http", target="u", tool="t")
ACCEPT_BOTH = {"Accept": "application/json, text/event-stream"}


async def test_a_request_body_mcpeek_cannot_decode_blames_no_server(proxied) -> None:  # type: ignore[no-untyped-def]
    # The client's gzip is corrupt (a bad CRC): mcpeek cannot read the message, so
    # the server's null-id parse error answers a message whose id nobody here read.
    async def upstream(request: web.Request) -> web.Response:
        error = {"code": -32700, "message": "Parse error"}
        return web.json_response({"jsonrpc": "2.0", "id": None, "error": error}, status=400)

    p = await proxied(upstream)
    body = gzip.compress(json.dumps(RPC).encode())[:-8] + b"\0" * 8
    headers = {"Content-Type": "application/json", "Content-Encoding": "gzip", **ACCEPT_BOTH}
    async with (
        aiohttp.ClientSession() as client,
        client.post(p.url + "/mcp", data=body, headers=headers) as r,
    ):
        assert r.status == 400 and await r.read()
    (request,) = p.http("request")
    assert request.undecoded and request.encoding == "gzip" and request.body_b64
    notes = [e.message or "" for e in p.records if isinstance(e, Event) and e.event == "note"]
    assert any("gzip body does not decode" in n for n in notes)  # said, as itself
    rules = [r.rule for r in lint_records([HEADER, *p.records])]
    assert "id.null" not in rules


async def test_a_response_mcpeek_cannot_decode_is_not_unanswered(proxied) -> None:  # type: ignore[no-untyped-def]
    truncated = gzip.compress(json.dumps(RESULT).encode())[:30]

    async def upstream(request: web.Request) -> web.Response:
        headers = {"Content-Type": "application/json", "Content-Encoding": "gzip"}
        return web.Response(body=truncated, headers=headers)

    p = await proxied(upstream)
    async with (
        aiohttp.ClientSession(auto_decompress=False) as client,
        client.post(p.url + "/mcp", json=RPC, headers=ACCEPT_BOTH) as r,
    ):
        assert await r.read() == truncated  # relayed as it was
    (end,) = p.http("end")
    assert end.undecoded and end.body_b64
    flows: list[Flow] = []
    analyze([HEADER, *p.records], _Flows(flows))
    assert [(f.method, f.status) for f in flows] == [("tools/call", "undecoded")]
    assert "request.unanswered" not in [r.rule for r in lint_records([HEADER, *p.records])]
