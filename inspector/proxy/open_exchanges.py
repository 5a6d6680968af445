"""The HTTP relay's exchanges under way, for a shutdown to end them."""

from __future__ import annotations

import asyncio


class OpenExchanges:
    """The tasks of the exchanges under way, which :meth:`close` ends."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[object]] = set()

    def of(self, task: asyncio.Task[object] | None) -> OpenExchange:
        """``with``: ``task`` (the exchange's own, given: asking asyncio for the
        current task cost more than the rest of this, in every exchange) is under
        way meanwhile."""
        return OpenExchange(self._tasks, task)

    async def close(self) -> None:
        """End every exchange under way (each records itself as ``client-closed``)."""
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


class OpenExchange:
    """One exchange's ``with`` (a class, not a ``contextlib.contextmanager``: one is
    entered for every exchange, where a generator's costs several times as much)."""

    __slots__ = ("_task", "_tasks")

    def __init__(self, tasks: set[asyncio.Task[object]], task: asyncio.Task[object] | None):
        self._tasks = tasks
        self._task = task

    def __enter__(self) -> None:
        if self._task is not None:
            self._tasks.add(self._task)

    def __exit__(self, *exc: object) -> None:
        self._tasks.discard(self._task)
