"""Replay over Streamable HTTP: one POST per message, JSON or SSE answers.

Each outgoing message is POSTed to the URL with
``Accept: application/json, text/event-stream``. The answer is a JSON body
(one message), an SSE stream (each event's ``data`` is one message: progress,
a server request, then the response), or ``202`` with no body (for a
notification or a response). Streams are read in the background, so the
server can ask something mid-call (a legacy ``elicitation/create``) and get
the answer POSTed beside it.

Headers: a step recorded over HTTP is sent with the headers its POST was
recorded with (``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name``,
``Mcp-Param-*``…), minus the hop-by-hop and transport ones, minus values the
capture redacted, and with the *live* ``Mcp-Session-Id``: the session a
recorded ``initialize`` was issued maps to the one the live server issues.
A step recorded over stdio gets the headers a client would send (which
headers: :mod:`~mcpeek.inspector.replay.replay_headers`). The recorded legacy
GET stream is opened again, and the recorded DELETE sent again, with the
live session.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import Callable, Iterable
from urllib.parse import urlsplit

import aiohttp

from mcpeek.inspector.capture.redact_targets import redacted_url
from mcpeek.inspector.proxy.sse import SseParser
from mcpeek.inspector.records import Http, Msg, SeqRecord, text_fields
from mcpeek.inspector.replay.credentials import CredentialPolicy
from mcpeek.inspector.replay.replay_headers import (
    header_problem,
    replayed_headers,
    synthesized_headers,
)
from mcpeek.inspector.replay.replay_plan import ClientStep, HttpStep
from mcpeek.inspector.replay.replay_transport import Closed, Deliver, Outgoing, ReplayError

ACCEPT = "application/json, text/event-stream"
HEADERS_WAIT = 1.0  # seconds a request's POST gets to be answered before the next step
Emit = Callable[[SeqRecord], None]


class HttpTransport:
    def __init__(
        self,
        url: str,
        emit: Emit,
        *,
        extra_headers: Iterable[tuple[str, str]] = (),
        timeout: float = 10.0,
        on_note: Callable[[str], None] = lambda _text: None,
        credentials: CredentialPolicy | None = None,
    ) -> None:
        self.url = url
        self.shown_url = redacted_url(url)  # what messages say: no credential of it
        self.credentials = credentials or CredentialPolicy(None, url, send_anyway=False)
        self.path = urlsplit(url).path or "/"
        self.emit = emit
        self.extra = [(k.lower(), v) for k, v in extra_headers]
        self.timeout = timeout
        self.on_note = on_note
        self.sessions: dict[str | None, str] = {}  # recorded session id → live one
        self.live_session: str | None = None
        self.version: str | None = None  # negotiated by a live initialize
        self.reached = False
        self.unreachable: str | None = None
        self._ids = itertools.count(1)
        self._session: aiohttp.ClientSession | None = None
        self._deliver: Deliver = lambda _data: None
        self._tasks: set[asyncio.Task[None]] = set()
        self._redacted: set[str] = set()
        self._unsendable: set[str] = set()

    async def start(self, deliver: Deliver, closed: Closed) -> None:
        self._deliver = deliver
        self._session = aiohttp.ClientSession(
            timeout=aiohttp.ClientTimeout(total=None, sock_connect=self.timeout),
            cookie_jar=aiohttp.DummyCookieJar(),
        )

    def _headers(self, item: Outgoing) -> dict[str, str]:
        step = item.step
        get = isinstance(step, HttpStep) and step.method == "GET"
        headers: dict[str, str] = {"accept": "text/event-stream" if get else ACCEPT}
        if item.data is not None:
            headers["content-type"] = "application/json"
        if step is not None and step.headers:
            kept, redacted = replayed_headers(step.headers)
            for name in set(redacted) - self._redacted:
                self._redacted.add(name)
                self.on_note(f"the capture redacted the {name} header: not sent (see --header)")
            kept, held = self.credentials.split(kept)
            if set(held) - self._redacted:
                self._redacted.update(held)
                self.on_note(self.credentials.note(held))
            headers.update(kept)
        elif item.data is not None and isinstance(step, ClientStep):
            headers.update(synthesized_headers(step.message, self.version))
        elif self.version:
            headers["mcp-protocol-version"] = self.version
        recorded = step.session if step is not None else None
        live = self.sessions.get(recorded, self.live_session) if recorded else self.live_session
        if live is not None:
            headers["mcp-session-id"] = live
        headers.update(self.extra)
        for name, value in list(headers.items()):
            problem = header_problem(name, value)
            if problem is not None:  # aiohttp would refuse the whole request
                del headers[name]
                if name not in self._unsendable:
                    self._unsendable.add(name)
                    self.on_note(f"the {name} header cannot be sent ({problem}): not sent")
        return headers

    async def send(self, item: Outgoing) -> None:
        x = f"x{next(self._ids)}"
        method = str(item.method) if isinstance(item.step, HttpStep) else "POST"
        headers = self._headers(item)
        self.emit(
            Http(x=x, phase="request", method=method, path=self.path, headers=list(headers.items()))
        )
        if item.data is not None:
            raw, raw_b64 = text_fields(item.data)
            self.emit(Msg(dir="c2s", ch=x, raw=raw, raw_b64=raw_b64))
        started = asyncio.Event()
        task = asyncio.get_running_loop().create_task(
            self._exchange(x, method, headers, item, started)
        )
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        if not self.reached:  # the first exchange says whether the server is there at all
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(started.wait(), self.timeout)
        elif item.kind == "request" or method == "GET":
            # Long calls and streams go on in the background; a short wait keeps order.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(started.wait(), HEADERS_WAIT)
        else:
            await asyncio.wait({task}, timeout=self.timeout)
        if self.unreachable is not None:
            raise ReplayError(self.unreachable)

    async def _exchange(
        self, x: str, method: str, headers: dict[str, str], item: Outgoing, started: asyncio.Event
    ) -> None:
        assert self._session is not None
        end = Http(x=x, phase="end", reason="complete")
        try:
            async with self._session.request(
                method, self.url, data=item.data, headers=headers, allow_redirects=False
            ) as response:
                first = not self.reached  # an error here: not the MCP endpoint at all
                self.reached = True
                failed = response.status >= 400 and (method != "GET" or response.status != 405)
                kind = response.headers.get("Content-Type", "").split(";")[0].strip().lower()
                if not (first and failed) or kind == "text/event-stream":
                    started.set()
                self._answered(item, response)
                self.emit(
                    Http(
                        x=x,
                        phase="response",
                        status=response.status,
                        headers=[(k.lower(), v) for k, v in response.headers.items()],
                    )
                )
                if kind == "text/event-stream":
                    await self._read_sse(x, response)
                    return
                body = await response.read()
                if kind == "application/json" and body.strip():
                    self._message(x, body)  # a JSON-RPC error, maybe: the request's answer
                elif body.strip():
                    end.body, end.body_b64 = text_fields(body[: 1 << 16])
                if failed:
                    text = body if kind == "text/plain" else b""
                    self._failed(item, method, response, text, first)
        except asyncio.CancelledError:
            end.reason = "client-closed"
            raise
        except (aiohttp.ClientError, OSError, TimeoutError) as exc:
            end.reason = "upstream-error"
            problem = f"{exc or type(exc).__name__}"
            if not self.reached:
                self.unreachable = f"cannot reach {self.shown_url}: {problem}"
            else:
                self._broken(item, method, problem)
        except Exception as exc:  # nobody awaits this task: it is reported here
            # Anything else (a request aiohttp refuses to send, a bug) fails this
            # exchange, not the replay; escaping, it would leave the request waiting
            # for its whole timeout and the task's exception unretrieved.
            end.reason = "upstream-error"
            self._broken(item, method, f"{type(exc).__name__}: {exc}")
        finally:
            started.set()
            self.emit(end)

    def _broken(self, item: Outgoing, method: str, problem: str) -> None:
        """The exchange ended without an HTTP answer: its request fails with ``problem``."""
        if item.failed is None or not item.failed(f"{method} failed: {problem}"):
            self.on_note(f"{method} to {self.shown_url} failed: {problem}")

    def _failed(
        self,
        item: Outgoing,
        method: str,
        response: aiohttp.ClientResponse,
        text: bytes,
        first: bool,
    ) -> None:
        """An HTTP error status: the request it answered, unless the body was its
        JSON-RPC response, ends at once with the status as its problem (no waiting for
        the timeout). On the first exchange the replay stops: not an MCP endpoint."""
        status = f"HTTP {response.status}" + (f" {response.reason}" if response.reason else "")
        detail = " ".join(text[:120].decode("utf-8", "replace").split())
        if detail:
            status += f" ({detail})"
        # "POST tools/call"; a GET or DELETE carries no JSON-RPC method of its own
        # (its item names the HTTP method again): "GET", not "GET GET".
        jsonrpc_method = item.method if item.method and item.method != method else ""
        what = f"{method} {jsonrpc_method}".strip()
        ended = item.failed is None or item.failed(status)  # False: it had its response
        if first and ended:
            hint = (
                " (it may need a header the capture redacted: see --header)"
                if response.status in (401, 403)
                else ""
            )
            self.unreachable = (
                f"{self.shown_url} is not an MCP endpoint that can be replayed to: "
                f"{what} answered {status}{hint}"
            )
        elif not ended or item.failed is None:
            self.on_note(f"{what} answered {status}")

    def _answered(self, item: Outgoing, response: aiohttp.ClientResponse) -> None:
        session = response.headers.get("Mcp-Session-Id")
        if session and item.method == "initialize":
            step = item.step
            recorded = step.issued_session if isinstance(step, ClientStep) else None
            self.sessions[recorded] = session
            self.live_session = session

    async def _read_sse(self, x: str, response: aiohttp.ClientResponse) -> None:
        parser = SseParser()
        async for chunk in response.content.iter_any():
            for event in parser.feed(chunk):
                self._message(x, event.data)
        for event in parser.finish()[0]:
            self._message(x, event.data)

    def _message(self, x: str, data: bytes) -> None:
        raw, raw_b64 = text_fields(data)
        self.emit(Msg(dir="s2c", ch=x, raw=raw, raw_b64=raw_b64))
        if self.version is None and b'"protocolVersion"' in data:
            self._learn_version(data)
        self._deliver(data)

    def _learn_version(self, data: bytes) -> None:
        import msgspec

        with contextlib.suppress(msgspec.DecodeError, RecursionError):
            message = msgspec.json.decode(data)
            result = message.get("result") if isinstance(message, dict) else None
            if isinstance(result, dict) and isinstance(result.get("protocolVersion"), str):
                self.version = result["protocolVersion"]

    async def close(self) -> None:
        pending = [t for t in self._tasks if not t.done()]
        if pending:
            await asyncio.wait(pending, timeout=0.5)
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._session is not None:
            await self._session.close()
