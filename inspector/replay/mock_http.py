"""The mock server over Streamable HTTP (aiohttp), both eras.

A thin front end to :class:`~mcpeek.inspector.replay.mock.MockSession`. Each POST
carries one message: a notification or a response gets ``202``; a request
gets its reaction, as ``application/json`` when the answer is the response
alone, else as an SSE stream (progress first, the response last). A legacy
``elicitation/create`` sent in the middle of a call goes on that call's
stream; when the client POSTs its answer, the rest of the call's plan goes
on the same stream.

Sessions: modern traffic (no ``Mcp-Session-Id``) shares one mock session,
so recorded answers are served in order across the stateless POSTs; a legacy
``initialize`` opens a new session whose id is returned in
``Mcp-Session-Id``; its server messages that belong to no request go on its
GET stream; ``DELETE`` ends it. A modern client's GET or DELETE gets 405.
Requests whose ``Host``/``Origin`` fail the loopback check get 403. The SSE
streams are written by :mod:`~mcpeek.inspector.replay.mock_http_streams`.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Callable
from typing import Any

from aiohttp import web

from mcpeek.inspector.proxy.guard import RequestGuard
from mcpeek.inspector.replay.forward import HttpUpstream
from mcpeek.inspector.replay.mock import MockServer, Reaction
from mcpeek.inspector.replay.mock_http_streams import (
    HttpConversation,
    get_stream,
    post_stream,
)
from mcpeek.inspector.replay.mock_play import Outgoing
from mcpeek.inspector.replay.rawjson import member_bytes
from mcpeek.inspector.replay.tape import Tape

MODERN = "2026-07-28"
LEGACY_EXCHANGE = "http:legacy"

STOP_GRACE = 1.0  # seconds open streams get when the mock stops


class HttpMock:
    def __init__(
        self,
        server: MockServer,
        guard: RequestGuard,
        *,
        tape: Tape | None = None,
        forward_url: str | None = None,
        note: Callable[[str], None] = lambda text: None,
    ) -> None:
        self.server = server
        self.guard = guard
        self.tape = tape or Tape(transport="http")
        self.note = note
        self.forward_url = forward_url
        self._modern: HttpConversation | None = None
        self._sessions: dict[str, HttpConversation] = {}
        self._exchanges = 0
        self._upstream: HttpUpstream | None = None
        self._upstream_for: dict[bytes, asyncio.Queue[Outgoing]] = {}

    def app(self) -> web.Application:
        app = web.Application(client_max_size=1 << 30)
        app.router.add_route("*", "/{tail:.*}", self._handle)
        app.on_startup.append(self._startup)
        app.on_shutdown.append(self._shutdown)
        return app

    async def _startup(self, app: web.Application) -> None:
        if self.forward_url is not None:
            self._upstream = HttpUpstream(self.forward_url, self._from_upstream)
            await self._upstream.start()

    async def _shutdown(self, app: web.Application) -> None:
        if self._upstream is not None:
            await self._upstream.close()

    def conversations(self) -> list[HttpConversation]:
        found = list(self._sessions.values())
        return found if self._modern is None else [self._modern, *found]

    # -- one HTTP request ------------------------------------------------------------
    async def _handle(self, request: web.Request) -> web.StreamResponse:
        refusal = self.guard.refusal(request.headers.get("Host"), request.headers.get("Origin"))
        if refusal is not None:
            return web.Response(status=403, text=refusal)
        self._exchanges += 1
        x = f"x{self._exchanges}"
        headers = [(k.lower(), v) for k, v in request.headers.items()]
        self.tape.http(x, "request", method=request.method, path=request.path, headers=headers)
        session_id = request.headers.get("Mcp-Session-Id")
        reason = "complete"
        try:
            if request.method == "POST":
                return await self._post(request, x, session_id)
            if request.method in ("GET", "DELETE") and session_id in self._sessions:
                if request.method == "DELETE":
                    self._sessions.pop(session_id).ended = True
                    return self._plain(x, 200)
                return await get_stream(request, x, self._sessions[session_id], self.tape)
            return self._plain(x, 405 if session_id is None else 404)
        except (ConnectionResetError, asyncio.CancelledError):
            reason = "client-closed"
            raise
        finally:
            self.tape.http(x, "end", reason=reason)

    def _plain(self, x: str, status: int, headers: dict[str, str] | None = None) -> web.Response:
        self.tape.http(x, "response", status=status, headers=list((headers or {}).items()))
        return web.Response(status=status, headers=headers)

    def _conversation(self, session_id: str | None, body: bytes) -> HttpConversation | None:
        if session_id is not None:
            return self._sessions.get(session_id)
        if member_bytes(body, ("method",)) == b'"initialize"':
            new_id = uuid.uuid4().hex
            conversation = HttpConversation(self.server.session(), new_id)
            self._sessions[new_id] = conversation
            return conversation
        if self._modern is None:
            self._modern = HttpConversation(self.server.session(), None)
        return self._modern

    async def _post(
        self, request: web.Request, x: str, session_id: str | None
    ) -> web.StreamResponse:
        body = await request.read()
        conversation = self._conversation(session_id, body)
        if conversation is None:
            self.tape.msg("c2s", body, x)
            return self._plain(x, 404)
        self.tape.msg("c2s", body, x)
        reaction: Reaction = conversation.session.receive(body)
        if reaction.note:
            self.note(reaction.note)
        live_id = member_bytes(body, ("id",)) if member_bytes(body, ("method",)) else None
        if reaction.forward and self._upstream is not None:
            self._forward(body, reaction.shadow, request, live_id, conversation)
        mine = [o for o in reaction.out if live_id is not None and o.stream == live_id]
        # A body that is no request (bad JSON, a batch) answered with an error: the
        # spec's 400 with that error, not 202 (streamable-http, "Sending Messages").
        refused = [o for o in reaction.out if live_id is None and _is_error(o)]
        for item in reaction.out:
            if item not in mine and item not in refused:
                conversation.route(item)
        headers = {}
        if conversation.session_id is not None:
            headers["Mcp-Session-Id"] = conversation.session_id
        if refused:
            headers["Content-Type"] = "application/json"
            self.tape.http(x, "response", status=400, headers=list(headers.items()))
            self.tape.msg("s2c", refused[0].data, x)
            return web.Response(status=400, body=refused[0].data, headers=headers)
        if live_id is None:
            return self._plain(x, 202, headers)
        queue = conversation.streams.setdefault(live_id, asyncio.Queue())
        for item in mine:
            queue.put_nowait(item)
        try:
            only = mine[:1] if len(mine) == 1 and mine[0].final else []
            if only:  # just the response: plain JSON
                conversation.streams.pop(live_id, None)
                if only[0].delay:
                    await asyncio.sleep(only[0].delay)
                headers["Content-Type"] = "application/json"
                self.tape.http(x, "response", status=200, headers=list(headers.items()))
                self.tape.msg("s2c", only[0].data, x)
                return web.Response(body=only[0].data, headers=headers)
            return await post_stream(request, x, headers, queue, self.tape)
        finally:
            conversation.streams.pop(live_id, None)

    # -- misses to a real server ------------------------------------------------------
    def _forward(
        self,
        body: bytes,
        shadow: bool,
        request: web.Request,
        live_id: bytes | None,
        conversation: HttpConversation,
    ) -> None:
        upstream = self._upstream
        if upstream is None:
            return
        if live_id is not None and not shadow:
            queue = conversation.streams.setdefault(live_id, asyncio.Queue())
            self._upstream_for[live_id] = queue
        version = request.headers.get("MCP-Protocol-Version")
        upstream.send(body, shadow=shadow, version=version)

    def _from_upstream(self, data: bytes) -> None:
        raw = member_bytes(data, ("id",))
        is_response = raw is not None and member_bytes(data, ("method",)) is None
        queue = self._upstream_for.get(raw) if raw is not None else None
        if queue is None and len(self._upstream_for) == 1:
            queue = next(iter(self._upstream_for.values()))
        if queue is None:
            return
        if is_response and raw is not None:
            self._upstream_for.pop(raw, None)
        queue.put_nowait(Outgoing(data, 0.0, raw, final=is_response))


def _is_error(item: Outgoing) -> bool:
    """A JSON-RPC error for no live request (the answer to a malformed body)."""
    data = item.data
    return (
        item.stream is None
        and member_bytes(data, ("error",)) is not None
        and (member_bytes(data, ("method",)) is None)
    )


async def serve_http(
    mock: HttpMock,
    host: str,
    port: int,
    stop: asyncio.Event,
    on_listen: Callable[[str], None] = lambda url: None,
) -> None:
    """Listen until ``stop`` is set; ``on_listen`` gets the URL (``…/mcp``)."""
    # A stream the capture never ended (no recorded answer) would hold the shutdown
    # for aiohttp's default 60 s: Ctrl-C must stop the mock promptly.
    runner = web.AppRunner(
        mock.app(), handler_cancellation=True, access_log=None, shutdown_timeout=STOP_GRACE
    )
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    await site.start()
    sockets: Any = getattr(site._server, "sockets", None) or []
    actual = sockets[0].getsockname()[1] if sockets else port
    mock.guard.port = actual
    shown = f"[{host}]" if ":" in host else host
    on_listen(f"http://{shown}:{actual}/mcp")
    try:
        await stop.wait()
    finally:
        with contextlib.suppress(Exception):
            await runner.cleanup()
