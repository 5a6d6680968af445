"""How a fast-lane connection ends: idle past the keep-alive timeout, and when the
server stops; each the way it ends on aiohttp's server alone (the lane off)."""

from __future__ import annotations

import asyncio
import json

import pytest

from tests.inspector.proxy.lane_harness import (
    HeldUpstream,
    Start,
    ends,
    json_upstream,
    port_of,
    post,
    read_response,
    settled,
)

KEEPALIVE = {"keepalive_timeout": 0.2}
# The lane on (its exchanges counted), and off: aiohttp's server serves them all.
LANE_OR_NOT = pytest.mark.parametrize("fast_lane", [True, False], ids=["lane", "aiohttp"])


async def closed_by_relay(reader: asyncio.StreamReader) -> bool:
    """Whether the relay closes the connection (within a generous bound: no hang)."""
    async with asyncio.timeout(10):
        return await reader.read() == b""


@LANE_OR_NOT
async def test_an_idle_kept_alive_connection_is_closed_after_the_keepalive_timeout(
    proxied: Start, fast_count: list[int], fast_lane: bool
) -> None:
    p = await proxied(json_upstream, server_options=KEEPALIVE, fast_lane=fast_lane)
    reader, writer = await asyncio.open_connection("127.0.0.1", port_of(p))
    writer.write(post(port_of(p), 1))
    await read_response(reader)
    assert await closed_by_relay(reader)
    writer.close()
    assert fast_count == [int(fast_lane)]


@LANE_OR_NOT
async def test_a_next_head_begun_during_an_exchange_still_times_out_when_idle(
    proxied: Start, fast_count: list[int], fast_lane: bool
) -> None:
    upstream = HeldUpstream()
    p = await proxied(upstream.handler, server_options=KEEPALIVE, fast_lane=fast_lane)
    reader, writer = await asyncio.open_connection("127.0.0.1", port_of(p))
    writer.write(post(port_of(p), 1))
    await upstream.arrived.wait()  # (the first request taken whole, not with the next bytes)
    writer.write(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # and never the rest
    await asyncio.sleep(0.05)  # (held while the exchange runs)
    upstream.release.set()
    await read_response(reader)
    assert await closed_by_relay(reader)
    writer.close()
    assert fast_count == [int(fast_lane)]


@LANE_OR_NOT
async def test_a_body_slower_than_the_keepalive_timeout_is_still_read(
    proxied: Start, fast_count: list[int], fast_lane: bool
) -> None:
    # aiohttp's keep-alive timer spares a request whose head came whole: so does the lane's.
    p = await proxied(json_upstream, server_options=KEEPALIVE, fast_lane=fast_lane)
    reader, writer = await asyncio.open_connection("127.0.0.1", port_of(p))
    request = post(port_of(p), 1)
    writer.write(request[:-5])
    await asyncio.sleep(4 * KEEPALIVE["keepalive_timeout"])
    writer.write(request[-5:])
    async with asyncio.timeout(10):
        _, body = await read_response(reader)
    writer.close()
    assert json.loads(body)["id"] == 1
    assert fast_count == [int(fast_lane)]


@LANE_OR_NOT
async def test_an_idle_connection_is_closed_when_the_server_stops(
    proxied: Start, fast_count: list[int], fast_lane: bool
) -> None:
    p = await proxied(json_upstream, fast_lane=fast_lane)
    reader, writer = await asyncio.open_connection("127.0.0.1", port_of(p))
    writer.write(post(port_of(p), 1))
    await read_response(reader)
    assert p.runner is not None
    await p.runner.cleanup()
    assert await closed_by_relay(reader)
    writer.close()
    assert fast_count == [int(fast_lane)]


@LANE_OR_NOT
@pytest.mark.parametrize("cli", [False, True], ids=["cleanup", "cli"])
async def test_an_exchange_under_way_when_the_server_stops(
    proxied: Start, fast_count: list[int], fast_lane: bool, cli: bool
) -> None:
    upstream = HeldUpstream()
    p = await proxied(upstream.handler, fast_lane=fast_lane)
    reader, writer = await asyncio.open_connection("127.0.0.1", port_of(p))
    writer.write(post(port_of(p), 1))
    await upstream.arrived.wait()
    assert p.runner is not None and p.relay is not None

    async def stop() -> None:
        if cli:
            await p.relay.close_exchanges()
        await p.runner.cleanup()

    stopping = asyncio.create_task(stop())
    await asyncio.sleep(0.1)  # (the server stopping before the upstream answers)
    upstream.release.set()
    async with asyncio.timeout(10):
        answered = await reader.read()
        await stopping
    writer.close()
    await settled(p, 1)
    assert fast_count == [int(fast_lane)]
    if cli:  # mcpeek ends every exchange first: none is answered
        assert (answered, ends(p)) == (b"", ["client-closed"])
    else:  # aiohttp's server lets a handler finish, then closes
        head, _, body = answered.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200 OK\r\n")
        assert json.loads(body)["id"] == 1
        assert ends(p) == ["complete"]


@LANE_OR_NOT
async def test_an_exchange_outlasting_the_shutdown_timeout_is_cut(
    proxied: Start, fast_count: list[int], fast_lane: bool
) -> None:
    upstream = HeldUpstream()  # (never released: it never answers in time)
    p = await proxied(upstream.handler, fast_lane=fast_lane)
    reader, writer = await asyncio.open_connection("127.0.0.1", port_of(p))
    writer.write(post(port_of(p), 1))
    await upstream.arrived.wait()
    assert p.runner is not None and p.runner.server is not None
    server = p.runner.server
    server.pre_shutdown()
    async with asyncio.timeout(10):
        await server.shutdown(0.2)  # as runner.cleanup() with a shutdown_timeout of 0.2 s
        answered = await reader.read()
    writer.close()
    await settled(p, 1)
    assert (answered, ends(p)) == (b"", ["client-closed"])
    assert fast_count == [int(fast_lane)]


async def test_a_connection_busy_longer_than_the_keepalive_timeout_stays_open(
    proxied: Start, fast_count: list[int]
) -> None:
    # Its one idle timer fires meanwhile (it is moved on, not made anew per request):
    # the time counts from the last response, as before.
    p = await proxied(json_upstream, server_options=KEEPALIVE)
    reader, writer = await asyncio.open_connection("127.0.0.1", port_of(p))
    for ident in range(1, 9):  # 8 x 0.05 s: twice the timeout
        writer.write(post(port_of(p), ident))
        async with asyncio.timeout(10):
            _, body = await read_response(reader)
        assert json.loads(body)["id"] == ident
        await asyncio.sleep(KEEPALIVE["keepalive_timeout"] / 4)
    assert await closed_by_relay(reader)  # then idle: closed
    writer.close()
    assert fast_count == [8]


async def test_a_connection_makes_one_idle_timer_for_all_its_requests(
    proxied: Start, fast_count: list[int]
) -> None:
    from mcpeek.inspector.proxy.fast_lane import FastLane

    loop = asyncio.get_running_loop()
    made: list[object] = []
    real = loop.call_at

    def call_at(when: float, callback, *args, **kwargs):  # type: ignore[no-untyped-def]
        if isinstance(getattr(callback, "__self__", None), FastLane):
            made.append(callback)
        return real(when, callback, *args, **kwargs)

    loop.call_at = call_at  # type: ignore[method-assign]
    try:
        p = await proxied(json_upstream)
        reader, writer = await asyncio.open_connection("127.0.0.1", port_of(p))
        for ident in range(1, 6):
            writer.write(post(port_of(p), ident))
            await read_response(reader)
        writer.close()
    finally:
        del loop.call_at
    assert fast_count == [5]
    assert len(made) == 1
