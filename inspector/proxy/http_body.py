"""A small request body that records itself once it has gone to the upstream.

The relay reads a small JSON-RPC POST whole and sends it in one piece. It must be
recorded after it was forwarded, but not as late as the upstream's answer: a
2026-07-28 server may send its response head only when the call is done, and a
request recorded then shows the wrong time, hides a hung call from ``--slow`` and
is lost altogether if the client gives up first. aiohttp writes a payload to the
connection through :meth:`write_with_length` (or :meth:`write`); once that
returns, the bytes are in the connection's hands and the request is recorded.
"""

from __future__ import annotations

from aiohttp import BytesPayload
from aiohttp.abc import AbstractStreamWriter

from mcpeek.inspector.proxy.http_record import RequestRecorder


class ForwardedBody(BytesPayload):
    """``body``, recorded by ``recorder`` (message and request head) right after
    aiohttp has written it to the upstream connection, or by :meth:`record` when
    the exchange ends first (an upstream that answered or failed before reading it).
    """

    def __init__(self, body: bytes, recorder: RequestRecorder) -> None:
        # The client's Content-Type goes on as a header; the payload adds none of its own.
        super().__init__(body, content_type="")
        self._recorder = recorder
        self._body = body
        self._recorded = False

    async def write(self, writer: AbstractStreamWriter) -> None:
        await super().write(writer)
        self.record()

    async def write_with_length(
        self, writer: AbstractStreamWriter, content_length: int | None
    ) -> None:
        await super().write_with_length(writer, content_length)
        self.record()

    def record(self) -> None:
        """Record the body as the client sent it, once (the message, and the request
        head with it if that has not gone out yet)."""
        if not self._recorded:
            self._recorded = True
            self._recorder.feed(self._body)
            self._recorder.finish()
