"""One conversation of the HTTP mock and the SSE streams its messages go out on.

An :class:`HttpConversation` is a mock session as HTTP sees it: the open POST
streams, one per live request id, and (legacy) the session's GET stream for
the server messages of no request. :mod:`~mcpeek.inspector.replay.mock_http`
decides which conversation a request belongs to; this module writes the
streams.
"""

from __future__ import annotations

import asyncio

from aiohttp import web

from mcpeek.inspector.proxy.sse import message_event
from mcpeek.inspector.replay.mock import MockSession
from mcpeek.inspector.replay.mock_play import Outgoing
from mcpeek.inspector.replay.tape import Tape

# What a streaming MCP server sends with an SSE response (the SDK does too):
# X-Accel-Buffering keeps a reverse proxy such as nginx from holding events back.
SSE_HEADERS = {
    "Content-Type": "text/event-stream",
    "Cache-Control": "no-cache",
    "X-Accel-Buffering": "no",
}
GET_POLL = 0.5  # seconds between looks at whether a legacy session was deleted


class HttpConversation:
    """A mock session's open streams; ``session_id`` is ``None`` for modern traffic."""

    def __init__(self, session: MockSession, session_id: str | None) -> None:
        self.session = session
        self.session_id = session_id
        self.streams: dict[bytes, asyncio.Queue[Outgoing]] = {}  # live request id → its POST
        self.standalone: asyncio.Queue[Outgoing] = asyncio.Queue()
        self.ended = False  # a legacy session's DELETE: its GET stream ends

    def route(self, item: Outgoing) -> None:
        """A message for another request's stream (a resumed plan), or for none."""
        target = self.streams.get(item.stream) if item.stream is not None else None
        if target is not None:
            target.put_nowait(item)
        elif self.session_id is not None:
            self.standalone.put_nowait(item)  # the legacy GET stream


async def post_stream(
    request: web.Request,
    x: str,
    headers: dict[str, str],
    queue: asyncio.Queue[Outgoing],
    tape: Tape,
) -> web.StreamResponse:
    """A POST answered as SSE: the queue's messages until the request's response."""
    headers = {**headers, **SSE_HEADERS}
    response = web.StreamResponse(headers=headers)
    await response.prepare(request)
    tape.http(x, "response", status=200, headers=list(headers.items()))
    while True:
        item = await queue.get()
        if item.delay:
            await asyncio.sleep(item.delay)
        await response.write(_event(item.data))
        tape.msg("s2c", item.data, x)
        if item.final:
            break
    await response.write_eof()
    return response


async def get_stream(
    request: web.Request, x: str, conversation: HttpConversation, tape: Tape
) -> web.StreamResponse:
    """A legacy session's GET stream: its messages of no request, until it is deleted."""
    headers = dict(SSE_HEADERS)
    if conversation.session_id:
        headers["Mcp-Session-Id"] = conversation.session_id
    response = web.StreamResponse(headers=headers)
    await response.prepare(request)
    tape.http(x, "response", status=200, headers=list(headers.items()))
    while not conversation.ended:
        try:
            item = await asyncio.wait_for(conversation.standalone.get(), GET_POLL)
        except TimeoutError:
            continue
        if item.delay:
            await asyncio.sleep(item.delay)
        await response.write(_event(item.data))
        tape.msg("s2c", item.data, x)
    return response


def _event(data: bytes) -> bytes:
    # A recorded message's CRLF becomes LF, so each of its lines is one data: line.
    return message_event(data.replace(b"\r\n", b"\n"))
