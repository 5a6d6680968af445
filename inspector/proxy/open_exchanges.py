"""The HTTP relay's exchanges under way, for a shutdown to end them."""

from __future__ import annotations

import asyncio


class OpenExchanges:
    """``with open_exchanges:`` the current task is an exchange under way meanwhile,
    which :meth:`close` ends. A class, not a ``contextlib.contextmanager``: it is
    entered for every exchange, where a generator's context manager costs several
    times as much."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[object]] = set()

    def __enter__(self) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)

    def __exit__(self, *exc: object) -> None:
        task = asyncio.current_task()  # the same task: entered and left in one coroutine
        if task is not None:
            self._tasks.discard(task)

    async def close(self) -> None:
        """End every exchange under way (each records itself as ``client-closed``)."""
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
