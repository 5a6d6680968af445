"""Forwarding the mock's misses to a real server (``--on-miss forward``).

An upstream is told each client message the mock does not answer itself
(:meth:`send`) and hands every message the real server sends back to
``on_message``; the front end passes them to the client. ``shadow`` marks a
message forwarded only to keep the real server in step (a legacy
``initialize`` that the mock answered from the capture): its answer is
dropped.

- :class:`StdioUpstream` spawns ``CMD`` and talks JSON lines with it.
- :class:`HttpUpstream` POSTs each message to a Streamable HTTP URL and
  reads the JSON or SSE answer; it keeps the ``Mcp-Session-Id`` a legacy
  server gives, and the ``MCP-Protocol-Version`` the client used.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

import msgspec

from mcpeek.inspector.capture.redact_targets import redacted_url
from mcpeek.inspector.replay.rawjson import member_bytes

OnMessage = Callable[[bytes], None]
LINE_LIMIT = 1 << 30


class UpstreamError(Exception):
    """The real server cannot be started or reached; ``str()`` says why."""


class _Shadowed:
    def __init__(self) -> None:
        self.ids: set[bytes] = set()

    def note(self, data: bytes, shadow: bool) -> None:
        if shadow:
            raw = member_bytes(data, ("id",))
            if raw is not None:
                self.ids.add(raw)

    def drops(self, data: bytes) -> bool:
        raw = member_bytes(data, ("id",))
        if raw is not None and raw in self.ids and member_bytes(data, ("method",)) is None:
            self.ids.discard(raw)
            return True
        return False


class StdioUpstream:
    def __init__(self, argv: list[str], on_message: OnMessage) -> None:
        self.argv = argv
        self.on_message = on_message
        self._process: asyncio.subprocess.Process | None = None
        self._reader: asyncio.Task[None] | None = None
        self._shadow = _Shadowed()

    async def start(self) -> None:
        try:
            self._process = await asyncio.create_subprocess_exec(
                *self.argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                limit=LINE_LIMIT,
            )
        except OSError as exc:
            raise UpstreamError(f"cannot start {self.argv[0]}: {exc.strerror or exc}") from None
        self._reader = asyncio.get_running_loop().create_task(self._read())

    async def _read(self) -> None:
        assert self._process is not None and self._process.stdout is not None
        while line := await self._process.stdout.readline():
            data = line.rstrip(b"\r\n")
            if data.strip() and not self._shadow.drops(data):
                self.on_message(data)

    def send(self, data: bytes, *, shadow: bool = False) -> None:
        process = self._process
        if process is None or process.stdin is None or process.stdin.is_closing():
            return
        self._shadow.note(data, shadow)
        process.stdin.write(data + b"\n")

    async def close(self, grace: float = 3.0) -> None:
        process = self._process
        if process is None:
            return
        if process.stdin is not None:
            with contextlib.suppress(OSError):
                process.stdin.close()
        try:
            await asyncio.wait_for(process.wait(), grace)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                process.terminate()
            try:
                await asyncio.wait_for(process.wait(), grace)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    process.kill()
                await process.wait()
        if self._reader is not None:
            with contextlib.suppress(asyncio.CancelledError, TimeoutError):
                await asyncio.wait_for(self._reader, 1.0)


class HttpUpstream:
    def __init__(self, url: str, on_message: OnMessage) -> None:
        self.url = url
        self.on_message = on_message
        self._session: Any = None
        self._session_id: str | None = None
        self._version: str | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._order = asyncio.Lock()  # a shadowed initialize goes first
        self._shadow = _Shadowed()

    async def start(self) -> None:
        import aiohttp

        self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=None))

    def send(self, data: bytes, *, shadow: bool = False, version: str | None = None) -> None:
        self._shadow.note(data, shadow)
        if version:
            self._version = version
        task = asyncio.get_running_loop().create_task(self._post(data, shadow))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _post(self, data: bytes, first: bool) -> None:
        from mcpeek.inspector.proxy.sse import SseParser

        headers = {
            "content-type": "application/json",
            "accept": "application/json, text/event-stream",
        }
        if self._version:
            headers["mcp-protocol-version"] = self._version
        try:
            if first:
                await self._order.acquire()
            elif self._order.locked():
                async with self._order:
                    pass
            if self._session_id:
                headers["mcp-session-id"] = self._session_id
            async with self._session.post(self.url, data=data, headers=headers) as response:
                self._session_id = response.headers.get("mcp-session-id", self._session_id)
                if first and self._order.locked():
                    self._order.release()
                kind = response.headers.get("content-type", "")
                delivered = False
                if kind.startswith("text/event-stream"):
                    parser = SseParser()
                    async for chunk in response.content.iter_any():
                        for event in parser.feed(chunk):
                            delivered = self._deliver(event.data) or delivered
                elif kind.startswith("application/json"):
                    delivered = self._deliver(await response.read())
                if not delivered and response.status >= 400:  # no JSON-RPC answer at all
                    status = f"HTTP {response.status} {response.reason or ''}"
                    reason = f"--forward {redacted_url(self.url)}: {status}"
                    self._fail(data, reason.rstrip())
        except Exception as exc:  # an unreachable upstream: the client hears of it
            self._fail(data, f"--forward {redacted_url(self.url)}: {exc or type(exc).__name__}")
        finally:
            if first and self._order.locked():
                self._order.release()

    def _deliver(self, body: bytes) -> bool:
        body = body.strip()
        if body and not self._shadow.drops(body):
            self.on_message(body)
            return True
        return False

    def _fail(self, data: bytes, reason: str) -> None:
        raw = member_bytes(data, ("id",))
        if raw is None or member_bytes(data, ("method",)) is None:
            return
        error = msgspec.json.encode({"code": -32603, "message": reason})
        self.on_message(b'{"jsonrpc":"2.0","id":' + raw + b',"error":' + error + b"}")

    async def close(self, grace: float = 3.0) -> None:
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=grace)
        for task in self._tasks:
            task.cancel()
        if self._session is not None:
            await self._session.close()
