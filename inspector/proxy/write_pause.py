"""Waiting while a transport's write buffer is full: the flow control the HTTP
relay's own protocols share (the fast lane's client side, an upstream connection)."""

from __future__ import annotations

import asyncio


class WritePause:
    """An ``asyncio.Protocol`` part: ``pause_writing`` and ``resume_writing`` as
    asyncio calls them, and a future to wait on in between (``_drain``)."""

    _loop: asyncio.AbstractEventLoop
    #: set while writing is paused; done (or ``None``) once the writer may go on
    _drain: asyncio.Future[None] | None = None

    def pause_writing(self) -> None:
        self._drain = self._loop.create_future()

    def resume_writing(self) -> None:
        if self._drain is not None and not self._drain.done():
            self._drain.set_result(None)
        self._drain = None

    def _drain_failed(self, exc: Exception) -> None:
        """The connection is gone: whoever waits for room to write gets ``exc``."""
        if self._drain is not None and not self._drain.done():
            self._drain.set_exception(exc)
            self._drain.exception()  # retrieved: a writer may never wait on it again
