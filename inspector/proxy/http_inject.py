"""What mcpeek sends on its own over Streamable HTTP: injected messages, and the
answer it gives in place to a server's request.

To the **server**, mcpeek POSTs the message to the upstream itself, the way the
client's own POSTs go: to the path of the client's last POST, with the headers
that tie a POST to the client's conversation as the client last sent them
(``Mcp-Session-Id`` and ``MCP-Protocol-Version`` in the legacy era,
``Authorization``, ``Host`` as the relay sends it) and, when the client speaks
the 2026-07-28 era (its POSTs carry ``Mcp-Method``), the request metadata
headers that era requires (``Mcp-Method``, and ``Mcp-Name`` for the methods
that name a tool, prompt or resource, Base64-wrapped when not plain ASCII)
and, in a request, the ``_meta`` envelope keys it lacks, from the client's
last request. Whatever the server answers on that exchange is mcpeek's:
recorded as ``consume`` acts, never forwarded.

To the **client**, the message goes out as one SSE event spliced between two
whole events of a stream the client has open: the legacy standalone GET
stream first, then a 2026-07-28 ``subscriptions/listen`` stream, then the
response stream of a POST in flight (the latest). With none open the
injection is refused: there is no way to reach an HTTP client otherwise.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from aiohttp import web
from multidict import CIMultiDict

from mcpeek.inspector.act.hold import HoldError
from mcpeek.inspector.jsonrpc import MessageDecoder
from mcpeek.inspector.proxy.http_meta import NAMED_BY, envelope, header_value, param
from mcpeek.inspector.proxy.sse import SseBlocks, message_event
from mcpeek.inspector.proxy.upstream import UpstreamClient
from mcpeek.inspector.records import Act, Direction, Event, Http, Msg, SeqRecord, text_fields

if TYPE_CHECKING:
    from mcpeek.inspector.act.verdicts import Outcome

Decide = Callable[[Direction, str, bytes], Awaitable["Outcome"]]
Emit = Callable[[Sequence[SeqRecord]], None]

#: The client's headers an injected POST carries (the rest describe the client's
#: own body, or are set below).
CONVERSATION_HEADERS = ("Host", "Authorization", "Mcp-Session-Id", "MCP-Protocol-Version")
#: Which open stream carries a message to the client, best first.
CARRIERS = ("get", "listen", "post")
LISTEN = "subscriptions/listen"


@dataclass
class ClientStream:
    """An SSE response the relay is writing to the client."""

    x: str
    request: web.BaseRequest
    response: web.StreamResponse
    kind: str  # one of CARRIERS

    def closing(self) -> bool:
        transport = self.request.transport
        return transport is None or transport.is_closing()


class HttpInjector:
    """Sends mcpeek's own messages to either peer of an HTTP relay (the
    :class:`~mcpeek.inspector.act.inject.Injector`'s ``deliver``)."""

    def __init__(
        self,
        emit: Emit,
        decide: Decide,
        new_exchange: Callable[[], str],
        upstream: UpstreamClient,
        origin: str,
    ) -> None:
        self.emit = emit
        self.decide = decide
        self.new_exchange = new_exchange
        self.upstream = upstream
        self.origin = origin
        self.streams: dict[str, ClientStream] = {}
        self._client_path: str | None = None
        self._client_headers: CIMultiDict[str] = CIMultiDict()
        self._modern = False
        self._tasks: set[asyncio.Task[None]] = set()
        self._decoder = MessageDecoder()
        self._envelope: dict[str, Any] = {}  # the 2026-07-28 _meta keys every request carries

    # -- what the relay tells ----------------------------------------------------------
    def client_posted(self, path: str, upstream_headers: CIMultiDict[str], body: bytes) -> None:
        """The client POSTed ``body`` to ``path`` with these headers (as sent upstream)."""
        message = self._decoder.decode(body)
        if message.kind == "request":  # the era shows on requests (a notification
            # POST has no Mcp-Method in either era)
            self._modern = "Mcp-Method" in upstream_headers
            keys = envelope(message.params)
            if keys:
                self._envelope = keys
        self._client_path = path
        self._client_headers = CIMultiDict(
            (k, v) for k, v in upstream_headers.items() if k.title() in _TITLED
        )

    def stream_opened(
        self, x: str, request: web.BaseRequest, response: web.StreamResponse, kind: str
    ) -> None:
        self.streams[x] = ClientStream(x, request, response, kind)

    def stream_closed(self, x: str) -> None:
        self.streams.pop(x, None)

    async def close(self) -> None:
        """Shutting down: end the exchanges mcpeek started."""
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    # -- sending -----------------------------------------------------------------------
    def deliver(self, direction: Direction, line: bytes, act: Act) -> None:
        """Send ``line`` towards the peer ``direction`` goes to; refused (``HoldError``)
        when nothing can carry it."""
        if direction == "s2c":
            stream = self.carrier()
            if stream is None:
                raise HoldError(
                    "no stream to the client is open to carry it (the client has no "
                    "GET stream, subscriptions/listen stream or POST response in flight)"
                )
            self._spawn(self._to_client(stream, line, act))
        else:
            self._check_server_known()
            self._spawn(self.post(line, [act], "inject"))

    def answer_server(self, answer: bytes, request: list[SeqRecord]) -> bool:
        """Answer a server's request in place: ``request`` (its records: the act, the
        message) is recorded and the answer POSTed as the client would (``False``:
        no client POST told mcpeek where to; nothing was done)."""
        if self._client_path is None:
            return False
        self.emit(request)
        self._spawn(self.post(answer, [], "reply"))
        return True

    def carrier(self) -> ClientStream | None:
        """The open stream a message to the client goes on (see the module's doc)."""
        for kind in CARRIERS:
            found = [s for s in self.streams.values() if s.kind == kind and not s.closing()]
            if found:
                return found[0] if kind != "post" else found[-1]
        return None

    def _check_server_known(self) -> None:
        if self._client_path is None:
            raise HoldError(
                "the client has not POSTed yet: mcpeek knows no endpoint or session to use"
            )

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _to_client(self, stream: ClientStream, line: bytes, act: Act) -> None:
        # One write of one whole event: the relay's own writes are whole events too
        # (aiohttp hands each to the transport before its first await), so the event
        # lands between two of them.
        try:
            if stream.x not in self.streams or stream.closing():
                raise ConnectionResetError
            await stream.response.write(message_event(line))
        except (ConnectionResetError, RuntimeError):  # the stream ended meanwhile
            text = f"{stream.x}: the stream to the client ended before mcpeek's message"
            self.emit([Event(event="note", message=f"{text} could be written; not sent")])
            return
        raw, raw_b64 = text_fields(line)
        act.ch = stream.x
        self.emit([act, Msg(dir="s2c", ch=stream.x, raw=raw, raw_b64=raw_b64, made="inject")])

    async def post(self, line: bytes, before: list[SeqRecord], made: str) -> None:
        """POST ``line`` upstream as an exchange of mcpeek's own and keep its answer."""
        assert self._client_path is not None
        x = self.new_exchange()
        line = self.enveloped(line)
        for record in before:
            if type(record) is Act and record.action == "inject":
                record.ch = x  # an injected message is on mcpeek's own exchange
        headers = self.post_headers(line)
        raw, raw_b64 = text_fields(line)
        request = Http(
            x=x, phase="request", method="POST", path=self._client_path, headers=[*headers.items()]
        )
        self.emit([request, *before, Msg(dir="c2s", ch=x, raw=raw, raw_b64=raw_b64, made=made)])
        reason = "complete"
        try:
            up = await self.upstream.request("POST", self._client_path, headers, line)
            async with up:
                head = Http(x=x, phase="response", status=up.status, headers=[*up.headers.items()])
                self.emit([head])
                media = up.headers.get("Content-Type", "").split(";", 1)[0].strip().lower()
                if media == "text/event-stream":
                    events = SseBlocks()
                    async for chunk in up.chunks():
                        for _, data in events.feed(chunk):
                            await self._keep(x, data)
                elif body := await up.read():
                    await self._keep(x, body)
        except OSError as exc:  # UpstreamError, UpstreamClosed
            reason = "upstream-closed"
            text = f"{x}: mcpeek's own POST to {self.origin} failed: {exc or type(exc).__name__}"
            self.emit([Event(event="upstream-error", message=text)])
        except asyncio.CancelledError:
            self.emit([Http(x=x, phase="end", reason="client-closed")])
            raise
        self.emit([Http(x=x, phase="end", reason=reason)])

    def enveloped(self, line: bytes) -> bytes:
        """A 2026-07-28 request carries the client's ``_meta`` envelope (its protocol
        version, capabilities, info) in every request: the keys it lacks, the client's."""
        if not self._modern or not self._envelope:
            return line
        message = json.loads(line)
        if "id" not in message or not isinstance(message.get("params", {}), dict):
            return line
        params = message.setdefault("params", {})
        meta = params.setdefault("_meta", {})
        if not isinstance(meta, dict) or self._envelope.keys() <= meta.keys():
            return line
        params["_meta"] = {**self._envelope, **meta}
        return json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode("utf-8")

    def post_headers(self, line: bytes) -> CIMultiDict[str]:
        """The headers of mcpeek's own POST of ``line`` (see the module's doc)."""
        headers = CIMultiDict(self._client_headers)
        headers["Content-Type"] = "application/json"
        headers["Accept"] = "application/json, text/event-stream"
        message = self._decoder.decode(line)
        if self._modern and message.method is not None and message.kind == "request":
            headers["Mcp-Method"] = message.method
            name = param(message.params, NAMED_BY.get(message.method))
            if name is not None:
                headers["Mcp-Name"] = header_value(name)
        return headers

    async def _keep(self, x: str, data: bytes) -> None:
        """One message of the answer to mcpeek's own POST: mcpeek's, recorded, kept."""
        if not data.strip():
            return
        kind = self._decoder.decode(data).kind
        act: Act | None = None
        if kind in ("result", "error"):  # the answer to an injected request: the actor's
            act = (await self.decide("s2c", x, data)).act
        if act is None or act.action != "consume":
            raw, raw_b64 = text_fields(data)
            act = Act(action="consume", dir="s2c", ch=x, by="control", rule="mcpeek's own POST")
            act.raw, act.raw_b64 = raw, raw_b64
        self.emit([act])


_TITLED = frozenset(name.title() for name in CONVERSATION_HEADERS)
