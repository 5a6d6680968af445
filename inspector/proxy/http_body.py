"""A small request body that records itself once it has gone to the upstream.

The relay reads a small JSON-RPC POST whole and sends it in one piece. It must be
recorded after it was forwarded, but not as late as the upstream's answer: a
2026-07-28 server may send its response head only when the call is done, and a
request recorded then shows the wrong time, hides a hung call from ``--slow`` and
is lost altogether if the client gives up first. The upstream client calls
:meth:`ForwardedBody.record` once it has handed the bytes to the connection.
"""

from __future__ import annotations

from mcpeek.inspector.proxy.http_record import RequestRecorder


class BodyTooLarge(Exception):
    """The client's streamed body went over the relay's limit (the upstream connection
    is cut with it: raised where the body is read, it comes out where the answer is)."""


class ForwardedBody:
    """``body``, recorded by ``recorder`` (message and request head) right after it
    was written to the upstream connection, or by :meth:`record` when the exchange
    ends first (an upstream that could not be reached)."""

    def __init__(self, body: bytes, recorder: RequestRecorder) -> None:
        self._recorder = recorder
        self._body = body
        self._recorded = False

    def record(self) -> None:
        """Record the body as the client sent it, once (the message, and the request
        head with it if that has not gone out yet)."""
        if not self._recorded:
            self._recorded = True
            self._recorder.feed(self._body)
            self._recorder.finish()
