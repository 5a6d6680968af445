"""A client that goes while the upstream answers: its exchange is still ended in the capture.

The window: the client's connection is closing (the proxy read its EOF or
reset) but not lost yet, when the upstream's head arrives. Writing the
response head then fails, before any body is relayed; the exchange must
still get its one ``end`` record. Here the listener's side of the client's
connection is aborted the moment the response head is recorded, which is
that window, made certain.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator

import aiohttp
import pytest
from aiohttp import web

from mcpeek.inspector.act.verdicts import Outcome
from mcpeek.inspector.proxy.guard import RequestGuard
from mcpeek.inspector.proxy.http import HttpRelay
from mcpeek.inspector.proxy.http_act import ActingHttpRelay
from mcpeek.inspector.records import Direction, Event, Http, Msg, SeqRecord, wire_bytes
from tests.inspector.proxy.http_harness import RESULT, RPC, listen

SSE = "text/event-stream"
JSON = "application/json"


async def passing(direction: Direction, x: str, raw: bytes) -> Outcome:
    return Outcome(forward=raw)


async def upstream_app(request: web.Request) -> web.StreamResponse:
    await request.read()
    if request.path.startswith("/.well-known/oauth-protected-resource"):
        # A document that breaks off: 400 bytes said, 20 sent, then the connection ends.
        response = web.StreamResponse(headers={"Content-Type": JSON, "Content-Length": "400"})
        await response.prepare(request)
        await response.write(b'{"resource": "http:/')
        assert request.transport is not None
        request.transport.close()
        return response
    kind = request.headers.get("X-Answer", JSON)
    body = json.dumps(RESULT).encode()
    if kind == SSE:
        body = b"data: " + body + b"\n\n"
    return web.Response(body=body, content_type=kind)


@contextlib.asynccontextmanager
async def relay_cutting_the_client(
    aiohttp_server, acting: bool, cut: bool = True
) -> AsyncIterator[tuple[list[SeqRecord], str]]:
    """A relay (plain, served by aiohttp's server, or acting) whose client connections
    are aborted on the listener's side when a response head is recorded (``cut``)."""
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", upstream_app)
    upstream = await aiohttp_server(app)
    records: list[SeqRecord] = []
    runners: list[web.BaseRunner] = []

    def emit(batch: list[SeqRecord]) -> None:
        records.extend(batch)
        if cut and any(isinstance(r, Http) and r.phase == "response" for r in batch):
            for conn in runners[0].server.connections:  # type: ignore[union-attr]
                if conn.transport is not None:
                    conn.transport.abort()  # closing now; lost on the loop's next turn

    guard = RequestGuard(0)
    url = str(upstream.make_url("/mcp"))
    relay = (
        ActingHttpRelay(url, emit, guard, decide=passing) if acting else HttpRelay(url, emit, guard)
    )
    relay.fast_lane = False  # aiohttp's server: the path whose head write can fail
    async with relay:
        runner, guard.port = await listen(relay)
        runners.append(runner)
        try:
            yield records, f"http://127.0.0.1:{guard.port}"
        finally:
            await runner.cleanup()


def exchanges(records: list[SeqRecord]) -> dict[str, list[str]]:
    """Each exchange's phases, in order (aiohttp's client sends a GET again, once,
    on a connection that closed: two exchanges then, each to be ended)."""
    phases: dict[str, list[str]] = {}
    for r in records:
        if isinstance(r, Http):
            phases.setdefault(r.x, []).append(r.phase)
    return phases


def ends(records: list[SeqRecord]) -> list[str | None]:
    return [r.reason for r in records if isinstance(r, Http) and r.phase == "end"]


@pytest.mark.parametrize("acting", [False, True], ids=["plain", "acting"])
@pytest.mark.parametrize(
    ("method", "answer"), [("POST", JSON), ("POST", SSE), ("GET", SSE)], ids=str
)
async def test_a_client_gone_when_the_head_arrives_still_ends_its_exchange(
    aiohttp_server, acting: bool, method: str, answer: str
) -> None:
    async with relay_cutting_the_client(aiohttp_server, acting) as (records, url):
        headers = {"X-Answer": answer, "Mcp-Session-Id": "s1", "Accept": f"{JSON}, {SSE}"}
        body = json.dumps(RPC).encode() if method == "POST" else None
        if body is not None:
            headers["Content-Type"] = JSON
        async with aiohttp.ClientSession() as client:
            with pytest.raises(aiohttp.ClientError):
                async with client.request(method, url + "/mcp", data=body, headers=headers) as r:
                    await r.read()
        for _ in range(50):  # the handler's end, on the proxy's loop
            if ends(records):
                break
            await asyncio.sleep(0.01)
    assert exchanges(records) == {x: ["request", "response", "end"] for x in exchanges(records)}
    assert set(ends(records)) == {"client-closed"}


@pytest.mark.parametrize("acting", [False, True], ids=["plain", "acting"])
async def test_without_the_cut_the_same_exchanges_complete(aiohttp_server, acting: bool) -> None:
    """The control: the same relay and requests, nobody cut, end complete."""
    relay = relay_cutting_the_client(aiohttp_server, acting, cut=False)
    async with relay as (records, url), aiohttp.ClientSession() as client:
        for answer in (JSON, SSE):
            headers = {"X-Answer": answer, "Accept": f"{JSON}, {SSE}"}
            async with client.post(url + "/mcp", json=RPC, headers=headers) as r:
                assert json.dumps(RESULT).encode() in await r.read()
    assert ends(records) == ["complete", "complete"]


async def test_an_oauth_document_that_breaks_off_ends_its_exchange(aiohttp_server) -> None:
    relay = relay_cutting_the_client(aiohttp_server, acting=False, cut=False)
    async with relay as (records, url), aiohttp.ClientSession() as client:
        with pytest.raises(aiohttp.ClientError):
            async with client.get(url + "/.well-known/oauth-protected-resource/mcp") as r:
                await r.read()
    assert exchanges(records) == {x: ["request", "response", "end"] for x in exchanges(records)}
    assert set(ends(records)) == {"upstream-closed"}


def phases(records: list[SeqRecord]) -> dict[str, list[str]]:
    """Each exchange's phases, an end with its reason (``end:complete``)."""
    out: dict[str, list[str]] = {}
    for r in records:
        if isinstance(r, Http):
            out.setdefault(r.x, []).append(r.phase if r.phase != "end" else f"end:{r.reason}")
    return out


async def test_an_acted_on_answer_whose_client_leaves_while_it_drains_ends_once(
    aiohttp_server,
) -> None:
    """The acting relay ends the client's response before it records ``complete``: a
    client lost while the end drains is recorded once (client-closed), not twice."""
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", upstream_app)
    upstream = await aiohttp_server(app)
    records: list[SeqRecord] = []
    runners: list[web.BaseRunner] = []
    loop = asyncio.get_running_loop()

    def emit(batch: list[SeqRecord]) -> None:
        records.extend(batch)
        if any(isinstance(r, Msg) and r.dir == "s2c" for r in batch):  # the answer is judged
            for conn in runners[0].server.connections:  # type: ignore[union-attr]
                conn.pause_writing()  # the client reads slowly: the end waits to drain
                loop.call_later(0.05, conn.transport.abort)  # then it leaves

    guard = RequestGuard(0)
    relay = ActingHttpRelay(str(upstream.make_url("/mcp")), emit, guard, decide=passing)
    relay.fast_lane = False
    async with relay:
        runner, guard.port = await listen(relay)
        runners.append(runner)
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", guard.port)
            body = json.dumps(RPC).encode()
            writer.write(
                b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\n"
                b"Content-Length: %d\r\n\r\n%b" % (guard.port, len(body), body)
            )
            await writer.drain()
            for _ in range(50):
                if ends(records):
                    break
                await asyncio.sleep(0.02)
            writer.close()
        finally:
            await runner.cleanup()
    assert phases(records) == {"x1": ["request", "response", "end:client-closed"]}


async def streaming_client(port: int, then: bytes, *, close: bool) -> None:
    """POST a chunked body whose first chunk goes at once and ``then`` once the
    upstream's answer has begun (and close the connection after, with ``close``)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(
        b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\n"
        b"Transfer-Encoding: chunked\r\n\r\n5\r\n[1,2,\r\n" % port
    )
    await writer.drain()
    await reader.readuntil(b": open\n\n")  # the upstream answered before the body's end
    writer.write(then)
    await writer.drain()
    if close:
        writer.transport.abort()
    else:
        await reader.read()  # until mcpeek closes the connection
        writer.close()


async def answering_first(request: web.Request) -> web.StreamResponse:
    """An upstream that opens its SSE answer before it reads the request's body."""
    response = web.StreamResponse(headers={"Content-Type": SSE})
    await response.prepare(request)
    await response.write(b": open\n\n")
    with contextlib.suppress(Exception):
        await request.read()
    await asyncio.sleep(5)  # (never answers: the relay must end the exchange itself)
    return response


@pytest.mark.parametrize("failure", ["over-the-limit", "client-gone"])
async def test_a_request_body_that_fails_after_the_answer_began_ends_its_exchange(
    aiohttp_server, failure: str
) -> None:
    app = web.Application(client_max_size=10**8)
    app.router.add_route("*", "/{tail:.*}", answering_first)
    upstream = await aiohttp_server(app)
    records: list[SeqRecord] = []
    guard = RequestGuard(0)
    url = str(upstream.make_url("/mcp"))
    async with HttpRelay(url, records.extend, guard, max_request_body=100_000) as relay:
        relay.fast_lane = False
        runner, guard.port = await listen(relay)
        try:
            if failure == "over-the-limit":
                big = b"1," * 100_000
                await streaming_client(guard.port, b"%x\r\n%b\r\n" % (len(big), big), close=False)
            else:
                await streaming_client(guard.port, b"4\r\n3,4,", close=True)
            for _ in range(100):
                if ends(records):
                    break
                await asyncio.sleep(0.02)
        finally:
            await runner.cleanup()
    reason = "refused" if failure == "over-the-limit" else "client-closed"
    assert phases(records) == {"x1": ["request", "response", f"end:{reason}"]}
    notes = [r.message for r in records if isinstance(r, Event) and r.event == "note"]
    sent = [r for r in records if isinstance(r, Msg) and r.dir == "c2s"]
    if failure == "client-gone":  # what came of the body is kept, marked partial
        assert [(wire_bytes(m), m.partial) for m in sent] == [(b"[1,2,3,4,", True)]
    else:  # not recorded, as a 413's body is not; a note says why the exchange was cut
        assert sent == []
        assert len(notes) == 1 and "over the limit of 100000 bytes" in notes[0]


async def test_an_oauth_document_nested_too_deeply_to_read_is_relayed_as_it_is(
    aiohttp_server,
) -> None:
    document = b"[" * 100_000 + b"]" * 100_000

    async def deep(request: web.Request) -> web.Response:
        return web.Response(body=document, content_type=JSON)

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", deep)
    upstream = await aiohttp_server(app)
    records: list[SeqRecord] = []
    guard = RequestGuard(0)
    async with HttpRelay(str(upstream.make_url("/mcp")), records.extend, guard) as relay:
        runner, guard.port = await listen(relay)
        relay.public_origin = f"http://127.0.0.1:{guard.port}"  # a rewrite to make
        try:
            async with (
                aiohttp.ClientSession() as client,
                client.get(relay.public_origin + "/.well-known/oauth-protected-resource") as r,
            ):
                assert await r.read() == document
        finally:
            await runner.cleanup()
    assert phases(records) == {"x1": ["request", "response", "end:complete"]}
