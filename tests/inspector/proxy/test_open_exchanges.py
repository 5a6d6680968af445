"""The relay's exchanges under way: a shutdown ends those, and only those."""

from __future__ import annotations

import asyncio

from mcpeek.inspector.proxy.open_exchanges import OpenExchanges


async def test_close_ends_the_exchanges_under_way_and_no_other_task() -> None:
    exchanges = OpenExchanges()
    ended: list[str] = []

    async def exchange(name: str, wait: asyncio.Event) -> None:
        with exchanges.of(asyncio.current_task()):
            try:
                await wait.wait()
            except asyncio.CancelledError:
                ended.append(name)
                raise

    never, done = asyncio.Event(), asyncio.Event()
    done.set()
    under_way = asyncio.create_task(exchange("under way", never))
    finished = asyncio.create_task(exchange("finished", done))
    outside = asyncio.create_task(never.wait())  # not an exchange
    await asyncio.sleep(0)
    await finished
    await exchanges.close()
    assert ended == ["under way"]
    assert under_way.cancelled()
    assert not outside.done()
    outside.cancel()
